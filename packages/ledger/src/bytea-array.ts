import pg from 'pg';

const BYTEA_ARRAY_OID = 1001;

/**
 * Parses PostgreSQL's text form of a (nested) bytea array: `{{"\\x6869",NULL},…}`. The checkpoint
 * saver reads every channel blob of a checkpoint as one such array; pg's generic array parser
 * walks it a character at a time (about 1 s per MB of state, all on the event loop), while each
 * element here is one hex slice (the text form of bytea has only hex digits inside the quotes).
 */
export function parseByteaArray(text: string): unknown[] {
  let i = 0;
  const parse = (): unknown[] => {
    i++; // '{'
    const out: unknown[] = [];
    if (text[i] === '}') {
      i++;
      return out;
    }
    for (;;) {
      if (text[i] === '{') out.push(parse());
      else if (text[i] === '"') {
        const end = text.indexOf('"', i + 1);
        // `"\\x` opens the element: a quote, an escaped backslash, then x.
        out.push(Buffer.from(text.slice(i + 4, end), 'hex'));
        i = end + 1;
      } else {
        out.push(null); // NULL
        i += 4;
      }
      if (text[i++] !== ',') return out;
    }
  };
  return parse();
}

/** pg's type parsers, with parseByteaArray for bytea[] in text form. */
export const LEDGER_TYPES = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === BYTEA_ARRAY_OID && format !== 'binary' ? parseByteaArray : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};
