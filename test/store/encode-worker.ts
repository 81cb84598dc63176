/** Worker body for warc-worker.test.ts: encodes groups off the main thread (as a piscina task would). */
import { parentPort, workerData } from 'node:worker_threads';
import { encodeExchangeRecords, type ExchangeInput, type EncodeOptions } from '../../src/store/index.js';

const { x, optsList } = workerData as { x: ExchangeInput; optsList: EncodeOptions[] };
const groups = optsList.map((opts) => encodeExchangeRecords({ ...x, date: new Date(x.date) }, opts));
parentPort!.postMessage(groups, groups.map((g) => g.data.buffer as ArrayBuffer));
