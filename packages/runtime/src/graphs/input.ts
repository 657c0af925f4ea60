import type { z } from 'zod';

/** Turns a failed zod parse into one readable line naming each bad field; undefined on success. */
export function describeIssues(graph: string, result: z.ZodSafeParseResult<unknown>): string | undefined {
  if (result.success) return undefined;
  const issues = result.error.issues.map((i) => `${i.path.join('.') || '(input)'}: ${i.message}`);
  return `${graph} input: ${issues.join('; ')}`;
}
