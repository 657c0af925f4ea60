/// <reference lib="dom" />
// The playground's browser code: a chat with one of the producer's graphs through the official
// SDK's React hook useStream, pointed at this origin. Tokens show as they stream; beside them the
// run (run id = Runledger job id): its attempt (from the stream's `metadata` events), its status
// (GET /threads/:tid/runs/:rid) and its effects (GET /v1/jobs/:id). Bundled by bundle.ts.
import { Client } from '@langchain/langgraph-sdk';
import { useStream } from '@langchain/langgraph-sdk/react';
import { type FormEvent, StrictMode, useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { createRoot } from 'react-dom/client';

const KEY_STORE = 'runledger.playground.apiKey';

interface Effect {
  key: string;
  name: string;
  status: string;
  attempts: number;
}
interface RunView {
  runId: string;
  threadId: string;
  attempt?: number;
  status: string;
  effects: Effect[];
}

const textOf = (content: unknown): string =>
  typeof content === 'string'
    ? content
    : Array.isArray(content)
      ? content.map((c) => (typeof c === 'string' ? c : ((c as { text?: string }).text ?? ''))).join('')
      : JSON.stringify(content);

function App() {
  const [apiKey, setApiKey] = useState(() => sessionStorage.getItem(KEY_STORE) ?? '');
  const [graphs, setGraphs] = useState<string[]>(['chat']);
  const [graph, setGraph] = useState('chat');
  const [threadId, setThreadId] = useState<string | null>(null);
  const [run, setRun] = useState<RunView | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [text, setText] = useState('');
  const [extra, setExtra] = useState('');
  const client = useMemo(() => new Client({ apiUrl: location.origin, apiKey: apiKey || null, callerOptions: { maxRetries: 0 } }), [apiKey]);
  // Answers can arrive out of order (the metadata event's read, then the finish's): keep the latest asked.
  const asked = useRef(0);
  // The run being streamed (its metadata events name the run, not the thread).
  const current = useRef<{ threadId: string; runId: string } | null>(null);

  useEffect(() => {
    client.assistants
      .search({ limit: 100 })
      .then((found) => {
        setGraphs([...new Set(found.map((a) => a.graph_id))].sort());
        setProblem(null);
      })
      .catch((err: Error) => setProblem(/401/.test(err.message) ? 'This producer needs an API key: paste a tenant key above.' : err.message));
  }, [client]);

  const refresh = useCallback(
    async (tid: string, runId: string, attempt?: number) => {
      const n = ++asked.current;
      const headers: Record<string, string> = apiKey ? { 'x-api-key': apiKey } : {};
      const [r, job] = await Promise.all([
        client.runs.get(tid, runId),
        fetch(`/v1/jobs/${encodeURIComponent(runId)}`, { headers }).then((res) => (res.ok ? (res.json() as Promise<{ effects: Effect[] }>) : null)),
      ]);
      if (n !== asked.current) return;
      setRun((prev) => ({ runId, threadId: tid, attempt: attempt ?? prev?.attempt, status: r.status, effects: job?.effects ?? [] }));
    },
    [client, apiKey],
  );

  const stream = useStream<{ messages: Array<{ type: string; content: unknown; id?: string }> }>({
    client,
    assistantId: graph,
    threadId,
    onThreadId: setThreadId,
    onCreated: (m) => {
      current.current = { threadId: m.thread_id, runId: m.run_id };
      setRun({ runId: m.run_id, threadId: m.thread_id, status: 'pending', effects: [] });
    },
    onMetadataEvent: (data) => {
      const { attempt } = data as { attempt?: number };
      setRun((prev) => (prev ? { ...prev, attempt } : prev));
      if (current.current) void refresh(current.current.threadId, current.current.runId, attempt).catch(() => undefined);
    },
    onFinish: (_state, m) => void (m && refresh(m.thread_id, m.run_id).catch((err: Error) => setProblem(err.message))),
    onError: (err, m) => {
      setProblem(err instanceof Error ? err.message : String(err));
      if (m) void refresh(m.thread_id, m.run_id).catch(() => undefined);
    },
  });

  const send = (event: FormEvent) => {
    event.preventDefault();
    let more: Record<string, unknown> = {};
    try {
      more = extra.trim() ? (JSON.parse(extra) as Record<string, unknown>) : {};
    } catch {
      setProblem('More input must be a JSON object.');
      return;
    }
    setProblem(null);
    setRun(null);
    setText('');
    void stream.submit(text.trim() ? { messages: [{ type: 'human', content: text }], ...more } : more);
  };

  return (
    <main>
      <h1>Runledger playground</h1>
      <form className="settings" onSubmit={(e) => e.preventDefault()}>
        <label>
          Graph{' '}
          <select
            id="graph"
            value={graph}
            onChange={(e) => {
              setGraph(e.target.value);
              setThreadId(null);
              setRun(null);
            }}
          >
            {graphs.map((g) => (
              <option key={g} value={g}>
                {g}
              </option>
            ))}
          </select>
        </label>
        <label>
          API key{' '}
          <input
            id="api-key"
            type="password"
            placeholder="only if the producer asks for one"
            value={apiKey}
            onChange={(e) => {
              setApiKey(e.target.value);
              sessionStorage.setItem(KEY_STORE, e.target.value);
            }}
          />
        </label>
        <button
          type="button"
          onClick={() => {
            setThreadId(null);
            setRun(null);
          }}
        >
          New thread
        </button>
        <span className="thread">thread {threadId ?? '(new)'}</span>
      </form>
      <ol id="messages">
        {stream.messages.map((m, i) => (
          <li key={m.id ?? i} className="message" data-role={m.type}>
            <span className="who">{m.type === 'human' ? 'you' : m.type}</span>
            <span className="content">{textOf(m.content)}</span>
          </li>
        ))}
      </ol>
      <form id="composer" onSubmit={send}>
        <input id="message" placeholder="Say something" value={text} onChange={(e) => setText(e.target.value)} />
        <input id="more-input" placeholder='more input, JSON (e.g. {"tokenDelayMs": 80})' value={extra} onChange={(e) => setExtra(e.target.value)} />
        <button type="submit" disabled={stream.isLoading}>
          Send
        </button>
      </form>
      {problem && <p id="problem">{problem}</p>}
      <section id="run">
        <h2>Run</h2>
        {run ? (
          <dl>
            <dt>run (job)</dt>
            <dd id="run-id">{run.runId}</dd>
            <dt>attempt</dt>
            <dd id="attempt">{run.attempt ?? '…'}</dd>
            <dt>status</dt>
            <dd id="status" data-status={run.status}>
              {run.status}
            </dd>
            <dt>effects</dt>
            <dd id="effects">
              {run.effects.length === 0
                ? 'none'
                : run.effects.map((e) => (
                    <div key={e.key} className="effect">
                      {e.name}: {e.status} ({e.attempts} {e.attempts === 1 ? 'attempt' : 'attempts'})
                    </div>
                  ))}
            </dd>
          </dl>
        ) : (
          <p>No run yet.</p>
        )}
      </section>
    </main>
  );
}

const root = document.getElementById('root');
if (root)
  createRoot(root).render(
    <StrictMode>
      <App />
    </StrictMode>,
  );
