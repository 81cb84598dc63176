/**
 * The numbers printed in the thesis (H.-T. Lee, "IRLbot: Design and Performance Analysis of a
 * Large-Scale Web Crawler", M.S. thesis, Texas A&M, 2008), transcribed cell for cell from its
 * text. Values are kept as printed (strings, thousands separators included) so that the printed
 * precision is known. Each table is named by chapter, section and caption (page numbers differ
 * between editions). test/models/printed.test.ts pins these strings to bench/results/models.json.
 */

/** Crawl sizes N of Tables II, III, VI and VII (rows). */
export const CRAWL_SIZES = [
  { label: '800M', N: 800e6 },
  { label: '8B', N: 8e9 },
  { label: '80B', N: 80e9 },
  { label: '800B', N: 800e9 },
  { label: '8T', N: 8e12 },
] as const;

/** Ch. IV §5, Table II. "Overhead α(n, R) in Crawling N Pages for R = 1 GB, D = 4.3 TB". */
export const TABLE_II = {
  mercatorB: ['11.6', '93', '917', '9,156', '91,541'],
  polybot: ['69', '663', '6,610', '66,082', '660,802'],
  drum: ['2.26', '2.35', '3.3', '12.5', '104'],
} as const;

/** Ch. IV §5, Table III. "Overhead α(n, R) in Crawling N Pages for D = D(n)" (R = 4 GB and 8 GB). */
export const TABLE_III = {
  r4: { mercatorB: ['4.48', '25', '231', '2,290', '22,887'], drum: ['2.30', '2.7', '3.3', '3.3', '8.1'] },
  r8: { mercatorB: ['3.29', '13.5', '116', '1,146', '11,444'], drum: ['2.30', '2.7', '3.3', '3.3', '3.7'] },
} as const;

/** Ch. V §2, Table V. "Insertion Rate and Maximum Crawling Speed from (21)" (E = 16M elements). */
export const TABLE_V = [
  { method: 'Balanced tree (strings)', mu: '113K', size: '2.2 GB', sCache: '1295' },
  { method: 'Tree-based LRU (8-byte int)', mu: '185K', size: '1.6 GB', sCache: '1757' },
  { method: 'Balanced tree (8-byte int)', mu: '416K', size: '768 MB', sCache: '2552' },
  { method: 'CLOCK (8-byte int)', mu: '2M', size: '320 MB', sCache: '3577' },
  { method: 'Random array (8-byte int)', mu: '77M', size: '128 MB', sCache: '5972' },
  { method: 'Seq array (8-byte int)', mu: '277M', size: '128 MB', sCache: '5992' },
] as const;

/** Ch. V §3, Table VI. "Overhead α(πn, R − c) ... for D = D(n) Using Caching with π = 0.33, c = 320 MB". */
export const TABLE_VI = {
  r4: { mercatorB: ['3.02', '10.4', '84', '823', '8,211'], drum: ['2.27', '2.4', '3.3', '3.3', '4.5'] },
  r8: { mercatorB: ['2.54', '6.1', '41', '395', '3,935'], drum: ['2.27', '2.4', '3.3', '3.3', '3.3'] },
} as const;

/** Ch. V §3, Table VII. "Maximum Hybrid Crawling Rate max_c S_hybrid(c) for D = D(n)" (pages/s). */
export const TABLE_VII = {
  r4: { mercatorB: ['18,051', '6,438', '1,165', '136', '13.9'], drum: ['26,433', '25,261', '18,023', '18,023', '11,641'] },
  r8: { mercatorB: ['23,242', '10,742', '2,262', '274', '27.9'], drum: ['26,433', '25,261', '18,023', '18,023', '18,023'] },
} as const;

/** Worked examples in the running text, with where they are. */
export const EXAMPLES = {
  // Ch. IV §1: seeking needs "enormously high hit rates (i.e., 99.7% for IRLbot)" (3 ms seeks vs 10 µs per URL).
  seekHitRate: '99.7', // %
  // Ch. IV §2, after eq. (6): "Mercator-B is roughly 7.2 times faster than Polybot as n → ∞".
  asymptoticPolybotRatio: '7.2',
  // Ch. IV §4, after eq. (17).
  dOpt1GB: '4.39', // TB
  dOpt2GB: '17', // TB
  quadraticAdvantage1GB: '1000',
  quadraticAdvantage8GB: '8000',
  rOptOverR: '0.33',
  // Ch. IV §4 end / §5: "α''_min = 2.256".
  drumAlphaMin: '2.256',
  // Ch. IV §5, after Table III.
  avgDiskSpeed: '675', // MB/s, (1 GB/s read + 350 MB/s write)/2
  effectiveW: '101.25', // MB/s, 15 % of 675
  sDisk: '4192', // pages/s, DRUM, R = 8 GB, N = 8T, D = D(n)
  sDiskBandwidth: '721', // mb/s at 21.5 KB/page
  pagesPerMonth: '100', // billion pages/month with 10 servers
  mercatorSlowdown: '3075',
  mercatorRate: '1.4', // pages/s
  polybotSlowdown: '7.2', // vs Mercator-B "with these parameters"
  polybotRate: '0.2', // pages/s
  // Ch. V §1: "IRLbot's peak value of τ_h l S ≈ 7.3 million".
  peakTauLS: '7.3', // million
  // Ch. V §3: c = 320 MB for E = 16M elements at γ = 20; speed-up 1/π and π^-2 ranges for π ∈ [0.25, 0.35].
  cacheBytes: '320', // MB
  mercatorASpeedupLow: '2.8',
  mercatorASpeedupHigh: '4',
  quadraticGainLow: '8',
  quadraticGainHigh: '16',
  // Ch. VII §2, Theorem 6 example (MB/s) and Theorem 7 remarks.
  naive100M: '3.7',
  naive8B: '82',
  naive80B: '820',
  beastLimit: '8.2',
  beastLimitOverUnique: 'four', // "roughly four times the speed needed to write all unique URLs" (compared as 4)
  beastJ8B: '9',
  beastJ80B: '87',
} as const;
