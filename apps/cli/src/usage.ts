/** The help text of `runledger`. */
export const USAGE = `Usage: runledger <command> [options]

Commands:
  dev                        the zero-setup stack in this directory (embedded PostgreSQL unless
                             DATABASE_URL is set, producer, two workers) serving ./langgraph.json
  producer | worker          one producer / worker process against DATABASE_URL (and REDIS_URL)
  worker --graphs a,b:2      a worker pool: only these graphs (b at most 2 at once here)
  submit <graph> [--input JSON] [--thread ID] [--key K] [--max-attempts N]
                             admit a job (ledger first, then the queue)
  jobs [--status S] [--graph G] [--thread T] [--limit N]
                             the newest jobs as a table
  job <id>                   a job's fields, timeline, effects and checkpoint count
  watch <id>                 follow a job live until it finishes or waits for a person
  cancel <id> [--note TEXT]  stop a job that has not finished
  resume <id> --value JSON   continue an interrupted job (value for interrupt())
  replay <id> [--note TEXT]  run a manual_reconcile job again after checking its effects
  resolve <id> --outcome completed|failed --note TEXT
                             close a manual_reconcile job by hand
  crons                      every cron: schedule, missed-firing policy, next and latest firing
  cron-add <graph> --schedule EXPR [--input JSON] [--timezone TZ] [--thread ID] [--missed run-once|skip]
                             store a cron (producers fire it through the ledger)
  cron-enable | cron-disable | cron-delete <id>
                             switch a cron on (from now) or off, or remove it
  limits                     every graph limit, with its running and held-back jobs
  limit-set <graph> [--max N [--interval-ms MS]] [--concurrent N]
                             limit a graph's runs per interval and at once, fleet-wide
  limit-remove <graph>       lift a graph's limits
  reconcile [--grace-ms N]   one reconciler sweep now (redeliver, expire leases)
  keys status                values per table still sealed with an older key; re-seal progress
  keys rotate [--to KID] [--batch N]
                             re-seal those values with the current (first) key of
                             RUNLEDGER_ENCRYPTION_KEY, with a progress bar; resumable, safe live
  migrate                    apply the ledger and checkpoint migrations
  doctor                     check PostgreSQL, schema, queue and workers; say what to fix
  upgrade --graph G --from V1 --to V2 [--replay] [--job ID] [--note TEXT]
                             move waiting / parked jobs of G to version V2 (replay: start again
                             from the stored input when V2 cannot resume V1's checkpoints)

Every command: --database-url URL, --schema NAME, --help; submit, jobs, job, crons, limits, keys status: --json
Environment: DATABASE_URL, DB_SCHEMA, REDIS_URL, QUEUE_BACKEND, QUEUE_PREFIX, RUNLEDGER_GRAPHS,
RUNLEDGER_CONFIG (a langgraph.json; default ./langgraph.json when present), RUNLEDGER_BUILTIN_GRAPHS
(1: the demo graphs beside a project's; default only without one).
Without DATABASE_URL the CLI uses the stack of a running \`npm start\`.`;
