/** Small helpers for benchmarks: repeat, take percentiles, print one aligned line per number. */

export async function timeRuns(runs: number, work: () => Promise<unknown>): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await work();
    times.push(performance.now() - start);
  }
  return times;
}

export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

export function report(name: string, value: number | string, unit = ''): void {
  const shown = typeof value === 'number' ? (value >= 100 ? value.toFixed(0) : value.toFixed(2)) : value;
  console.log(`${name.padEnd(56)} ${shown}${unit ? ` ${unit}` : ''}`);
}

export function mib(bytes: number): number {
  return bytes / 1024 / 1024;
}
