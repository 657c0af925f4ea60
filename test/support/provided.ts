// What the global setup hands to every test file through provide/inject.
declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
    redisUrl: string | null;
  }
}

export {};
