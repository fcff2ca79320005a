/** The cockpit's activity chart: a bar per step (inline SVG, height by tokens), review marks, and the steps as a list. */
import type { TimelineView } from '../../src/shared/cockpitProtocol';
import { timelineBars, timelineTotals } from '../../src/shared/timelineChart';
import { el } from '../common/dom';

const SVG = 'http://www.w3.org/2000/svg';
const BAR_WIDTH = 18;
const GAP = 8;
const HEIGHT = 64;
const LABEL_HEIGHT = 14;

function svg(tag: string, attrs: Record<string, string>, ...children: Node[]): SVGElement {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value);
  node.append(...children);
  return node;
}

function title(text: string): SVGElement {
  const t = document.createElementNS(SVG, 'title');
  t.textContent = text;
  return t;
}

export function timelineView(timeline: TimelineView): HTMLElement {
  if (timeline.steps.length === 0) {
    return el(
      'p',
      { class: 'muted', 'data-testid': 'timeline-empty' },
      'No model calls yet: each phase and each review-chat turn shows up here with its tokens and cost.',
    );
  }
  const bars = timelineBars(timeline);
  const width = bars.length * (BAR_WIDTH + GAP) + GAP;
  const chart = svg('svg', {
    class: 'timeline-chart',
    width: String(width),
    height: String(HEIGHT + LABEL_HEIGHT),
    viewBox: `0 0 ${width} ${HEIGHT + LABEL_HEIGHT}`,
    role: 'img',
    'aria-label': `Tokens per step: ${timelineTotals(timeline)}`,
  });
  bars.forEach((bar, i) => {
    const x = GAP + i * (BAR_WIDTH + GAP);
    const h = Math.max(2, Math.round(bar.height * HEIGHT));
    chart.append(
      svg(
        'rect',
        {
          class: `timeline-bar phase-${bar.phase}${bar.running ? ' running' : ''}`,
          x: String(x),
          y: String(HEIGHT - h),
          width: String(BAR_WIDTH),
          height: String(h),
          rx: '2',
        },
        title(bar.description),
      ),
      svg(
        'text',
        {
          class: 'timeline-label',
          x: String(x + BAR_WIDTH / 2),
          y: String(HEIGHT + LABEL_HEIGHT - 2),
          'text-anchor': 'middle',
        },
        document.createTextNode(bar.label),
      ),
    );
    if (bar.marksAfter.length > 0) {
      const mx = x + BAR_WIDTH + GAP / 2;
      chart.append(
        svg(
          'line',
          { class: 'timeline-mark', x1: String(mx), x2: String(mx), y1: '0', y2: String(HEIGHT) },
          title(bar.marksAfter.join('; ')),
        ),
      );
    }
  });
  const leading = timeline.marks.filter((m) => m.after < 0).map((m) => m.text);
  const steps = el(
    'ol',
    { class: 'timeline-steps', 'aria-label': 'Steps, oldest first' },
    ...leading.map((text) => el('li', { class: 'timeline-mark-item muted' }, `— ${text}`)),
    ...bars.flatMap((bar) => [
      el(
        'li',
        { 'data-testid': 'timeline-step', 'data-phase': bar.phase },
        el('span', { class: `timeline-key phase-${bar.phase}`, 'aria-hidden': 'true' }),
        el('strong', {}, bar.label),
        ` ${bar.description}`,
      ),
      ...bar.marksAfter.map((text) =>
        el('li', { class: 'timeline-mark-item muted', 'data-testid': 'timeline-mark' }, `— ${text}`),
      ),
    ]),
  );
  return el(
    'div',
    { class: 'timeline', 'data-testid': 'timeline' },
    el('p', { class: 'muted', 'data-testid': 'timeline-totals' }, timelineTotals(timeline)),
    el('div', { class: 'timeline-scroll' }, chart),
    el('details', { class: 'timeline-details' }, el('summary', {}, 'Every step'), steps),
  );
}
