/**
 * What a walk finds (SPEC §5 1a): the code reached (entries), the problems (effects) and the sequences
 * advanced, for one statement or for one function body. A function's findings are merged into its caller's
 * with the way it was reached, so every reason names the function and how the statement got to it.
 */
import type { SideEffect } from '../sideEffectFunctions';
import type {
  ReachEffect,
  ReachEffectKind,
  ReachEntry,
  ReachVerdict,
  StatementReach,
} from '../../../shared/reachTypes';

/** Worst first (reachTypes.ts: what each kind means on each path). */
export const EFFECT_ORDER: readonly ReachEffectKind[] = [
  'irreversible',
  'unknown',
  'privileged',
  'ddl',
  'write',
  'sequence',
];

/** How a function is reached when the statement (or body) calls it by name. */
export const CALLED = 'called directly';

export interface Problem {
  kind: ReachEffectKind;
  /** A predicate for a person, without the subject: "runs COPY … TO PROGRAM (a shell command on the server)". */
  what: string;
}

/** The judgement of one function (or rule): memoized per oid and code version. */
export interface Judgement {
  problems: Problem[];
  /** What it reaches in turn, with vias relative to it ("called by public.f(integer)"). */
  entries: ReachEntry[];
  sequences: string[];
}

export const SAFE: Judgement = { problems: [], entries: [], sequences: [] };

export function verdictOf(problems: readonly Problem[]): ReachVerdict {
  if (problems.length === 0) return 'safe';
  return problems.every((p) => p.kind === 'unknown') ? 'unknown' : 'side-effect';
}

function rank(kind: ReachEffectKind): number {
  return EFFECT_ORDER.indexOf(kind);
}

export function sortProblems<T extends { kind: ReachEffectKind }>(list: T[]): T[] {
  return list.sort((a, b) => rank(a.kind) - rank(b.kind));
}

/** "a → b", or just b when a is empty (the statement itself). */
export function chain(prev: string, next: string): string {
  return prev === '' ? next : `${prev} → ${next}`;
}

/**
 * The effect kind of a built-in on the side-effect list: a sequence change is `sequence`, other writes
 * `write`, DDL `ddl`; session and admin state (locks, settings, signals, files, WAL) is what ROLLBACK does
 * not undo, and so is another connection (dblink, postgres_fdw: it commits on its own); SQL run from text is
 * unknown code. A large-object read is a read.
 */
export function builtinProblem(effect: SideEffect): Problem | undefined {
  const fn = effect.name.toLowerCase().split('.').pop() ?? '';
  if (/^(dblink|postgres_fdw)/.test(fn)) return { kind: 'irreversible', what: `${effect.why} (it commits on its own)` };
  switch (effect.class) {
    case 'read':
      return undefined;
    case 'write':
      return { kind: effect.why.includes('sequence') ? 'sequence' : 'write', what: effect.why };
    case 'ddl':
      return { kind: 'ddl', what: effect.why };
    case 'session':
    case 'admin':
      return { kind: 'irreversible', what: effect.why };
    default:
      return { kind: 'unknown', what: effect.why };
  }
}

/** Collects findings; `body` says whether they belong to a function body (reasons then read "calls …"). */
export class Found {
  readonly entries: ReachEntry[] = [];
  readonly problems: Problem[] = [];
  readonly sequences = new Set<string>();
  private readonly entryKeys = new Set<string>();
  private readonly problemKeys = new Set<string>();

  /** `owner`: the function whose body this is ("public.f(integer)"), for the vias of what it reaches. */
  constructor(
    readonly body: boolean,
    private readonly owner = '',
  ) {}

  problem(kind: ReachEffectKind, what: string): void {
    const key = `${kind}\u0000${what}`;
    if (this.problemKeys.has(key)) return;
    this.problemKeys.add(key);
    this.problems.push({ kind, what });
  }

  entry(entry: ReachEntry): void {
    const key = `${entry.function}\u0000${entry.via}`;
    if (this.entryKeys.has(key)) return;
    this.entryKeys.add(key);
    this.entries.push(entry);
  }

  sequence(name: string, via: string): void {
    this.sequences.add(name);
    this.problem('sequence', via === '' ? `advances the sequence ${name}` : `advances the sequence ${name} (${via})`);
  }

  /**
   * Merges what `subject` does (a function's judgement) reached `via`: an entry (functions, and built-ins
   * with an effect), a problem per problem of the judgement, and everything it reaches in turn.
   */
  reach(subject: string, via: string, judgement: Judgement, options: { builtin: boolean; isFunction: boolean }): void {
    const shownVia = via === '' ? CALLED : via;
    const worst = sortProblems([...judgement.problems])[0];
    if (options.isFunction && (!options.builtin || worst)) {
      const entryVia = this.owner === '' ? shownVia : via === '' ? `called by ${this.owner}` : chain(this.owner, via);
      this.entry({
        function: subject,
        via: entryVia,
        verdict: verdictOf(judgement.problems),
        ...(worst ? { effect: worst.what } : {}),
      });
    }
    for (const p of judgement.problems) this.problem(p.kind, this.compose(subject, shownVia, p.what));
    for (const e of judgement.entries) this.entry(e);
    for (const s of judgement.sequences) this.sequences.add(s);
  }

  private compose(subject: string, via: string, what: string): string {
    if (this.body)
      return via === CALLED ? `calls ${subject}, which ${what}` : `reaches ${subject} (${via}), which ${what}`;
    return via === CALLED ? `${subject} ${what}` : `${subject} (${via}) ${what}`;
  }

  judgement(): Judgement {
    return { problems: sortProblems([...this.problems]), entries: [...this.entries], sequences: [...this.sequences] };
  }

  statementReach(): StatementReach {
    const effects: ReachEffect[] = sortProblems([...this.problems]).map((p) => ({ kind: p.kind, reason: p.what }));
    return { entries: [...this.entries], effects, sequences: [...this.sequences] };
  }
}
