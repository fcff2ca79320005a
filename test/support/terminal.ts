/**
 * A real pseudo-terminal for CLI tests (util-linux `script` gives the process a tty for stdin and stdout)
 * and a small screen model that applies what a terminal obeys — CR, LF, BS, and the CSI sequences that
 * move the cursor or erase (G, K, J; others are ignored) — so a test asserts on what a person would see.
 */
import { spawn } from 'node:child_process';

export interface TerminalRun {
  code: number | null;
  /** Every byte the terminal received, as UTF-8 text (LF arrives as CRLF: the tty's onlcr). */
  raw: string;
}

/**
 * Runs `command` (a shell command line; pass awkward values through `env`) on a fresh pseudo-terminal.
 * `answer(output)` is asked after each chunk of output; a string it returns is typed, once per prompt seen.
 */
export function runOnTerminal(
  command: string,
  options: {
    env: NodeJS.ProcessEnv;
    cwd: string;
    answer?: (output: string, answered: number) => string | undefined;
    killAfterMs?: number;
  },
): Promise<TerminalRun> {
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qfec', command, '/dev/null'], {
      cwd: options.cwd,
      env: options.env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let raw = '';
    let answered = 0;
    // A hung prompt must not hang the suite: the run is ended and its output shown by the failing assertion.
    const killer = setTimeout(() => child.kill('SIGKILL'), options.killAfterMs ?? 30_000);
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      raw += chunk;
      const reply = options.answer?.(raw, answered);
      if (reply !== undefined) {
        answered += 1;
        child.stdin.write(reply);
      }
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      raw += chunk;
    });
    child.on('error', (error) => {
      clearTimeout(killer);
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(killer);
      child.stdin.destroy();
      resolve({ code, raw });
    });
  });
}

/** The screen's lines after the terminal has applied `raw` (no wrapping: lines are as long as written). */
export function screenOf(raw: string): string[] {
  const lines: string[][] = [[]];
  let row = 0;
  let col = 0;
  const chars = [...raw];
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i] ?? '';
    const line = (lines[row] ??= []);
    if (c === '\r') col = 0;
    else if (c === '\n') {
      row += 1;
      lines[row] ??= [];
    } else if (c === '\b') col = Math.max(0, col - 1);
    else if (c === '\u001b' || c === '\u009b') {
      // CSI: ESC [ (or U+009B) parameters, then one final byte.
      let j = c === '\u001b' ? i + 1 : i;
      if (c === '\u001b' && chars[j] !== '[') {
        i = j; // a two-byte escape: skipped
        continue;
      }
      j += 1;
      let params = '';
      while (j < chars.length && /[0-9;?]/.test(chars[j] ?? '')) params += chars[j++];
      const final = chars[j] ?? '';
      i = j;
      const n = Number(params.split(';')[0] || '0');
      if (final === 'G') col = Math.max(0, (n || 1) - 1);
      else if (final === 'K') {
        if (n === 2) line.length = 0;
        else if (n === 0) line.length = Math.min(line.length, col);
        else for (let k = 0; k < col && k < line.length; k++) line[k] = ' ';
      } else if (final === 'J' && (n === 0 || n === 2)) {
        line.length = Math.min(line.length, n === 2 ? 0 : col);
        lines.length = row + 1;
      }
    } else if (c === '\u0007') {
      // BEL: no mark on the screen
    } else {
      while (line.length < col) line.push(' ');
      line[col] = c;
      col += 1;
    }
  }
  return lines.map((l) => l.join('').trimEnd());
}
