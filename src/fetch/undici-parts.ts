/**
 * The two parts of undici the fetcher uses — `Pool` (one per IP: fetcher.ts) and `buildConnector`
 * (the sockets' connector: interim.ts) — loaded from their own files, not from undici's index. The
 * index loads all of undici (fetch, WebSocket, EventSource, the cache, the mock agents, …): on this
 * VM importing it cost ~0.5 s of CPU against ~0.3 s for these two (`node -e` of each, 3 runs, a
 * bare node ~0.15 s; docs/performance.md "Start-up"), in the main thread of every crawl and in every
 * page worker. undici's package declares no "exports" map, so its files are public paths; its
 * types are the index's (the same classes).
 */
import { createRequire } from 'node:module';
import type { Pool as UndiciPool, buildConnector as undiciBuildConnector } from 'undici';

const require = createRequire(import.meta.url);

export const Pool = require('undici/lib/dispatcher/pool.js') as typeof UndiciPool;
export const buildConnector = require('undici/lib/core/connect.js') as typeof undiciBuildConnector;
/** (the instance type, as `import { Pool } from 'undici'` gives it) */
export type Pool = UndiciPool;
