/**
 * The Prometheus text exposition format (version 0.0.4), for the guard's few metrics: counters, gauges read
 * when scraped, histograms with fixed buckets, each with labels. Written here rather than taken from
 * prom-client: the guard needs a dozen series, and that package brings a metrics registry, default process
 * metrics and two dependencies (@opentelemetry/api, tdigest) for what is about 100 lines of text formatting.
 */

type Labels = Record<string, string>;

interface Metric {
  render(): string[];
}

/** `name{a="x",b="y"}`, label values escaped as the format says (backslash, newline, double quote). */
function series(name: string, labels: Labels): string {
  const entries = Object.entries(labels);
  if (entries.length === 0) return name;
  const text = entries.map(([k, v]) => `${k}="${v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"')}"`);
  return `${name}{${text.join(',')}}`;
}

const labelKey = (labels: Labels): string =>
  JSON.stringify(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : 1)));

function number(value: number): string {
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  return Number.isNaN(value) ? 'NaN' : String(value);
}

export class Counter implements Metric {
  private readonly values = new Map<string, { labels: Labels; value: number }>();

  constructor(
    readonly name: string,
    private readonly help: string,
    /** Series shown at 0 before anything counted them (so a rate() has a start). */
    initial: Labels[] = [],
  ) {
    for (const labels of initial) this.values.set(labelKey(labels), { labels, value: 0 });
  }

  inc(labels: Labels = {}, by = 1): void {
    const key = labelKey(labels);
    const entry = this.values.get(key);
    if (entry) entry.value += by;
    else this.values.set(key, { labels, value: by });
  }

  render(): string[] {
    return [
      `# HELP ${this.name} ${this.help}`,
      `# TYPE ${this.name} counter`,
      ...[...this.values.values()].map((e) => `${series(this.name, e.labels)} ${number(e.value)}`),
    ];
  }
}

/** A value read at each scrape. */
export class Gauge implements Metric {
  constructor(
    readonly name: string,
    private readonly help: string,
    private readonly read: () => number,
  ) {}

  render(): string[] {
    return [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} gauge`, `${this.name} ${number(this.read())}`];
  }
}

export class Histogram implements Metric {
  private readonly values = new Map<string, { labels: Labels; counts: number[]; sum: number; count: number }>();

  constructor(
    readonly name: string,
    private readonly help: string,
    /** Upper bounds, ascending (the +Inf bucket is added). */
    private readonly buckets: readonly number[],
  ) {}

  observe(labels: Labels, value: number): void {
    const key = labelKey(labels);
    let entry = this.values.get(key);
    if (!entry) {
      entry = { labels, counts: this.buckets.map(() => 0), sum: 0, count: 0 };
      this.values.set(key, entry);
    }
    for (let i = 0; i < this.buckets.length; i++) if (value <= this.buckets[i]!) entry.counts[i]!++;
    entry.sum += value;
    entry.count++;
  }

  render(): string[] {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
    for (const e of this.values.values()) {
      this.buckets.forEach((le, i) =>
        lines.push(`${series(`${this.name}_bucket`, { ...e.labels, le: number(le) })} ${e.counts[i]}`),
      );
      lines.push(`${series(`${this.name}_bucket`, { ...e.labels, le: '+Inf' })} ${e.count}`);
      lines.push(`${series(`${this.name}_sum`, e.labels)} ${number(e.sum)}`);
      lines.push(`${series(`${this.name}_count`, e.labels)} ${e.count}`);
    }
    return lines;
  }
}

/** The text of every metric, in order, as GET /metrics answers it. */
export function renderMetrics(metrics: readonly Metric[]): string {
  return `${metrics.flatMap((m) => m.render()).join('\n')}\n`;
}

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';
