/**
 * dependency-cruiser: the rooms of src/ and the one direction their imports run in
 * (docs/architecture.md, "Rooms"). `npm run depcruise` checks it in `npm test`; `npm run graph`
 * draws docs/rooms.svg from the same cruise.
 *
 * ROOMS lists, for each room (a folder of src/, or a subfolder where it is a room of its own), the
 * rooms it may import. The order of the table is the order of the layers, lowest first: a room
 * imports only rooms listed above it, so no import runs upward and no two rooms import each other.
 */
/** The rooms below the crawler that its rooms may import. */
const CRAWL_BELOW = ['errors', 'budget', 'config', 'disk', 'dns', 'drum', 'fetch', 'frontier', 'monitor', 'robots', 'sitemap', 'state', 'store', 'threads', 'threads/archive', 'threads/drum', 'threads/page', 'url', 'util'];
/**
 * The stages of a page job, last first (thesis Fig. 2 read backwards: the sync that makes a page
 * durable, URLseen's answers into STAR and BEAST, URLseen, ContentSeen's answers into the archive,
 * ContentSeen, the fetch's answer and the parser, the crawling threads).
 */
const STAGES = ['crawl/durable', 'crawl/admit', 'crawl/urlseen', 'crawl/archive', 'crawl/content', 'crawl/fetched', 'crawl/fetch'];

const ROOMS = [
  // leaves: no domain code below them
  ['errors', []],
  ['util', []],
  ['disk', ['errors']],
  ['url', ['errors']],
  ['dns', ['errors']],
  ['threads', []], // worker entry files, thread roles, the links wire format
  ['html', ['errors', 'util']],
  ['drum', ['errors', 'disk', 'util']],
  ['store/cdxj', []], // the CDXJ index's line format, its writer and sort (the store's WARC writer feeds it)
  ['store', ['errors', 'disk', 'util', 'store/cdxj']],
  // the frontier: STAR, BEAST and the politeness heaps (their order inside: FRONTIER_INSIDE below)
  ['frontier', ['errors', 'disk', 'drum', 'util']],
  ['threads/drum', ['errors', 'drum', 'frontier', 'threads']],
  ['robots', ['errors', 'disk', 'threads/drum']],
  ['fetch', ['errors', 'dns', 'frontier', 'robots']],
  ['config', ['errors', 'url', 'fetch']],
  ['sitemap', ['url', 'frontier', 'config']],
  // where each RAM bound comes from (--ram split among the parts)
  ['budget', ['errors', 'config', 'fetch', 'frontier']],
  ['threads/page', ['errors', 'budget', 'config', 'fetch', 'html', 'store', 'threads', 'url']],
  ['threads/archive', ['errors', 'config', 'dns', 'fetch', 'store', 'threads']],
  ['state', ['errors', 'config', 'disk', 'store', 'util']],
  ['monitor', ['errors', 'disk', 'robots', 'threads']],
  // The crawler (thesis Fig. 2): the pipeline's ports onto the frontier, robots, cluster and floors;
  // the state its stages share; then one room per stage of a page job, the last stage first. A
  // stage imports only the stage right after it (its base class) and the two shared rooms, so the
  // page job's data can only move down the stages (docs/architecture.md, "A page job's path");
  // the scheduler (src/crawl/ itself) enters the chain at its head, the fetch stage.
  ['crawl/ports', CRAWL_BELOW],
  ['crawl/core', [...CRAWL_BELOW, 'crawl/ports']],
  ...STAGES.map((stage, i) => [stage, [...CRAWL_BELOW, 'crawl/ports', 'crawl/core', ...(i === 0 ? [] : [STAGES[i - 1]])]]),
  ['crawl', [...CRAWL_BELOW, 'crawl/ports', 'crawl/core', 'crawl/fetch']],
  // one crawl over N nodes (docs/cluster.md): partitions of crawls, on the message engine (cluster/engine/)
  ['cluster', ['errors', 'budget', 'config', 'crawl', 'crawl/ports', 'crawl/fetch', 'disk', 'dns', 'drum', 'fetch', 'frontier', 'monitor', 'robots', 'state', 'store', 'threads', 'threads/archive', 'threads/drum', 'threads/page', 'url', 'util']],
  // the synthetic web: an instrument beside the crawler, sharing only the error codes
  ['simweb/model', ['errors']],
  ['simweb', ['errors', 'simweb/model']],
  ['cli', ['errors', 'budget', 'cluster', 'config', 'crawl', 'crawl/ports', 'disk', 'monitor', 'simweb', 'simweb/model', 'state']],
  ['index', null], // src/index.ts, the package's entry: re-exports the rooms
];

/** The regular expression of a room's files (a subfolder that is a room of its own is left out). */
function roomPath(room) {
  if (room === 'errors') return '^src/errors\\.ts$';
  if (room === 'index') return '^src/index\\.ts$';
  if (room === 'frontier' || room === 'cli' || room === 'url' || room === 'cluster') return `^src/${room}/`;
  return `^src/${room}/[^/]+$`;
}

const layerRules = [];
ROOMS.forEach(([room, allowed], i) => {
  if (allowed === null) return;
  const above = ROOMS.slice(0, i).map(([r]) => r);
  for (const a of allowed) if (!above.includes(a)) throw new Error(`.dependency-cruiser.cjs: ${room} may not import ${a}, listed above it`);
  layerRules.push({
    name: `layer-${room.replace('/', '-')}`,
    comment: `src/${room} imports only ${allowed.length === 0 ? 'no other room' : allowed.join(', ')} (docs/architecture.md, "Rooms")`,
    severity: 'error',
    from: { path: roomPath(room) },
    to: { path: '^src/', pathNot: [roomPath(room), ...allowed.map(roomPath)] },
  });
});

// Inside the frontier (thesis VI.2, VII.1–2): the URL record and the queue interface at its root,
// STAR's budgets, BEAST's queues and the politeness heaps on them (the heaps read STAR's budgets),
// and the Frontier (frontier.ts, options.ts, index.ts) over all three.
const FRONTIER_BASE = '^src/frontier/(record|queue)\\.ts$';
const frontierRules = [
  { name: 'frontier-base', from: { path: FRONTIER_BASE }, to: { path: '^src/frontier/', pathNot: FRONTIER_BASE } },
  { name: 'frontier-star', from: { path: '^src/frontier/star/' }, to: { path: '^src/frontier/', pathNot: ['^src/frontier/star/', FRONTIER_BASE] } },
  { name: 'frontier-beast', from: { path: '^src/frontier/beast/' }, to: { path: '^src/frontier/', pathNot: ['^src/frontier/beast/', FRONTIER_BASE] } },
  { name: 'frontier-politeness', from: { path: '^src/frontier/politeness/' }, to: { path: '^src/frontier/', pathNot: ['^src/frontier/(politeness|star)/', FRONTIER_BASE] } },
].map((r) => ({ ...r, severity: 'error', comment: 'the frontier\'s rooms import downward only (record/queue < STAR, BEAST < politeness < Frontier)' }));

// Inside the cluster: the message engine and what travels through it never import the partitions
// and the node that use them.
const clusterRules = [
  { name: 'cluster-engine', severity: 'error', comment: 'cluster/engine/ imports no cluster code outside it', from: { path: '^src/cluster/engine/' }, to: { path: '^src/cluster/', pathNot: '^src/cluster/engine/' } },
];

module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', comment: 'no import cycle, of files or through a room\'s index.ts', from: {}, to: { circular: true } },
    { name: 'src-not-to-test-bench', severity: 'error', comment: 'the crawler never imports its tests or benches', from: { path: '^src/' }, to: { path: '^(test|bench)/' } },
    { name: 'not-to-unresolvable', severity: 'error', comment: 'every import resolves', from: {}, to: { couldNotResolve: true } },
    ...layerRules,
    ...frontierRules,
    ...clusterRules,
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^src/url/data/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'], extensions: ['.ts', '.js'] },
    reporterOptions: {
      dot: {
        collapsePattern: '^src/(frontier/(star|beast|politeness)|threads/(page|drum|archive)|crawl/(ports|core|fetch|fetched|content|archive|urlseen|admit|durable)|simweb/model|cluster/engine|cli|[^/]+)(/|\\.ts$)',
      },
    },
  },
};
