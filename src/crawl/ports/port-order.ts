/**
 * The order in which the frontier port's asynchronous operations reach the frontier.
 *
 *   exclusive(fn)  a commit, a readmission, the close: runs after every operation registered before
 *                  it has ended, and every operation registered after it waits for it.
 *   refill(fn)     a refill: after every operation before it; later exclusive operations and refills
 *                  wait for it, admissions do not.
 *   admit(fn)      an admission — a synchronous placement into BEAST (`fn` must not await): after every
 *                  exclusive operation and admission registered before it, but not after a refill under
 *                  way. A refill yields between its batches (FrontierOptions.pause) and BEAST takes
 *                  placements at those points — a re-spread sends them to its new QF (beast/respread.ts),
 *                  and no placement goes to the queue being read (k ≥ 1).
 *
 * Why admissions pass refills: a QR pass is one refill, and over 577,000 URLs under load it takes
 * ~25 s of the clock. Admissions queued behind it held URLseen's result chunks, so each URLseen
 * merge that met a pass lasted until the pass ended (2–6 s merges became 17–46 s), pages awaiting
 * that merge reached their bound, and the dispatch stopped: the stalled seconds of bench:soak at
 * 10^7 hosts and --ram 512M (bench/results/soak-512m-1e7-30min-fd18a7d.json).
 */
export class PortOrder {
  /** Every operation registered so far (each settled, never rejected). */
  private all: Promise<void> = Promise.resolve();
  /** The exclusive operations and admissions registered so far: what an admission follows. */
  private placed: Promise<void> = Promise.resolve();

  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const p = this.all.then(fn);
    this.all = this.placed = settled(p);
    return p;
  }

  refill<T>(fn: () => Promise<T>): Promise<T> {
    const p = this.all.then(fn);
    this.all = settled(p);
    return p;
  }

  admit(fn: () => void): Promise<void> {
    const p = this.placed.then(fn);
    const done = settled(p);
    this.placed = done;
    this.all = Promise.all([this.all, done]).then(() => undefined);
    return p;
  }
}

const settled = (p: Promise<unknown>): Promise<void> =>
  p.then(
    () => undefined,
    () => undefined,
  );
