// The cost of showing SQL as it runs (shared/visibleSql): every surface where a person decides calls it,
// the CLI and MCP on every text they print. Plain statements (nothing to replace: the common case), a
// statement with hidden characters, and a 1 MB script.
import { sqlCorpus } from '../test/fixtures/sqlCorpus';
import { visibleSql } from '../src/shared/visibleSql';
import { report } from './stats';

function perSecond(inputs: readonly string[], rounds: number): number {
  const start = performance.now();
  for (let i = 0; i < rounds; i++) for (const s of inputs) visibleSql(s);
  return (inputs.length * rounds) / ((performance.now() - start) / 1000);
}

const corpus = sqlCorpus.map((c) => c.sql);
perSecond(corpus, 200);
report(`plain corpus statements (${corpus.length})`, perSecond(corpus, 200), 'statements/s');

const spoofed = corpus.map((s) => `${s} /*\u001b[2K\rUPDATE t SET tag = 'reviewed' \u202e*/`);
perSecond(spoofed, 50);
report('corpus statements with 3 hidden characters each', perSecond(spoofed, 200), 'statements/s');

const script = `${"UPDATE orders SET status = 'archived' WHERE id = 12345; -- tidy up ünïcødé 🐘\n".repeat(13_000)}`;
const start = performance.now();
const rounds = 20;
for (let i = 0; i < rounds; i++) visibleSql(script);
report(`a ${(script.length / 1e6).toFixed(1)} MB script, nothing hidden`, (performance.now() - start) / rounds, 'ms');
