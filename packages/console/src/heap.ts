import { setFlagsFromString } from 'node:v8';

/**
 * How far V8 lets the old generation grow past what was live after the last full collection, in
 * percent. V8's own choice moves between 10 % and 300 % with how fast collections run against the
 * program; under a steady check-in load it chose near the top, and RSS climbed about 100 MB over
 * the first minutes of a soak, then stayed there (docs/performance.md, "Console memory").
 */
export const HEAP_GROWING_PERCENT = 50;

/**
 * Sets the console's heap growth once, before it serves. It is a V8 flag read at each collection,
 * so it works when set at run time, in every form the console runs in (`node cli.js`, the single
 * executable, which takes no node flags, and each cluster worker). An operator who gives
 * `--heap-growing-percent` on node's command line keeps theirs.
 */
export function limitHeapGrowth(execArgv: readonly string[] = process.execArgv): void {
  if (execArgv.some((a) => a.startsWith('--heap-growing-percent') || a.startsWith('--heap_growing_percent'))) return;
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
