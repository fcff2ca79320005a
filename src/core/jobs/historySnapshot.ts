/**
 * Writes a snapshot of a job folder as git objects (blobs, trees, a commit) straight into the job's
 * `.history`, as one pack per commit (historyPack.ts), so that isomorphic-git (and real git) read it as usual.
 *
 * Why not isomorphic-git's add + commit: they go through the index (read, stat every file, rewrite it)
 * and compress with web streams, ~40 ms for a new job's 23 files; a job commits at every phase boundary
 * and review decision, in front of the person waiting for the plan. Here a commit is one read of each
 * file, a SHA-1, and a synchronous deflate of only the objects HEAD does not have, into one new file (~2 ms).
 * Hidden entries (`.history`, an in-flight `.<hex>.tmp` of an atomic write, caches such as `.index`) and
 * symbolic links are not versioned; empty folders are not either (git has no empty trees inside a tree).
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';
import type { HistoryObject, ObjectType } from './historyPack';
import { readPacked, writePack } from './historyPack';
import { writeFileAtomicSync } from '../fs/atomicWrite';
import { isErrno } from '../fs/errno';

interface TreeEntry {
  name: string;
  mode: '100644' | '40000';
  oid: string;
}

function objectId(type: ObjectType, body: Buffer): string {
  return createHash('sha1').update(`${type} ${body.length}\0`).update(body).digest('hex');
}

/** The objects a commit adds, written together as one pack once the snapshot is complete. */
class NewObjects {
  private readonly byId = new Map<string, HistoryObject>();

  add(type: ObjectType, body: Buffer): string {
    const oid = objectId(type, body);
    this.byId.set(oid, { oid, type, body });
    return oid;
  }

  list(): HistoryObject[] {
    return [...this.byId.values()];
  }
}

/** git's tree order: by name bytes, a folder compared as if its name ended with "/". */
function treeOrder(a: TreeEntry, b: TreeEntry): number {
  const key = (e: TreeEntry) => Buffer.from(e.mode === '40000' ? `${e.name}/` : e.name);
  return Buffer.compare(key(a), key(b));
}

/** An object of the history: loose (histories written before packs, or by git) or in a pack. */
function readObject(gitdir: string, oid: string, type: ObjectType): Buffer {
  let found: { type: string; body: Buffer } | undefined;
  try {
    const raw = inflateSync(readFileSync(join(gitdir, 'objects', oid.slice(0, 2), oid.slice(2))));
    const nul = raw.indexOf(0);
    found = { type: raw.subarray(0, nul).toString('latin1').split(' ')[0] ?? '', body: raw.subarray(nul + 1) };
  } catch (error) {
    if (!isErrno(error, 'ENOENT')) throw error;
    found = readPacked(gitdir, oid);
  }
  if (found === undefined) throw new Error(`the job history has no object ${oid}`);
  if (found.type !== type) throw new Error(`history object ${oid} is a ${found.type}, not a ${type}`);
  return found.body;
}

/** The entries of a tree the history has, by name (what HEAD holds: those objects need not be written again). */
function readTree(gitdir: string, oid: string | undefined): Map<string, TreeEntry> {
  const entries = new Map<string, TreeEntry>();
  if (oid === undefined) return entries;
  const body = readObject(gitdir, oid, 'tree');
  for (let at = 0; at < body.length;) {
    const space = body.indexOf(0x20, at);
    const nul = body.indexOf(0, space);
    const mode = body.subarray(at, space).toString('latin1');
    const name = body.subarray(space + 1, nul).toString('utf8');
    entries.set(name, {
      name,
      mode: mode === '40000' ? '40000' : '100644',
      oid: body.subarray(nul + 1, nul + 21).toString('hex'),
    });
    at = nul + 21;
  }
  return entries;
}

/**
 * The tree of `dir` (undefined when it holds nothing versioned), compared with `previous` (the same
 * folder's tree in HEAD): only objects HEAD does not have are written.
 */
function writeTree(gitdir: string, dir: string, previous: string | undefined, added: NewObjects): string | undefined {
  const before = readTree(gitdir, previous);
  const entries: TreeEntry[] = [];
  for (const dirent of readdirSync(dir, { withFileTypes: true })) {
    if (dirent.name.startsWith('.')) continue;
    const path = join(dir, dirent.name);
    const old = before.get(dirent.name);
    if (dirent.isDirectory()) {
      const oid = writeTree(gitdir, path, old?.mode === '40000' ? old.oid : undefined, added);
      if (oid !== undefined) entries.push({ name: dirent.name, mode: '40000', oid });
      continue;
    }
    if (!dirent.isFile()) continue;
    let text: Buffer;
    try {
      text = readFileSync(path);
    } catch (error) {
      // Deleted between the listing and the read: it is simply not in this snapshot.
      if (isErrno(error, 'ENOENT')) continue;
      throw error;
    }
    const oid = objectId('blob', text);
    if (old?.oid !== oid) added.add('blob', text);
    entries.push({ name: dirent.name, mode: '100644', oid });
  }
  if (entries.length === 0) return undefined;
  entries.sort(treeOrder);
  const body = Buffer.concat(
    entries.map((e) => Buffer.concat([Buffer.from(`${e.mode} ${e.name}\0`), Buffer.from(e.oid, 'hex')])),
  );
  const oid = objectId('tree', body);
  if (oid !== previous) added.add('tree', body);
  return oid;
}

function readRef(gitdir: string, ref: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(join(gitdir, ref), 'utf8');
  } catch (error) {
    if (isErrno(error, 'ENOENT')) return undefined;
    throw error;
  }
  const oid = text.trim();
  return /^[0-9a-f]{40}$/.test(oid) ? oid : undefined;
}

/** The tree a commit points at. */
function treeOf(gitdir: string, commit: string): string {
  const match = /^tree ([0-9a-f]{40})\n/.exec(readObject(gitdir, commit, 'commit').subarray(0, 46).toString('latin1'));
  if (!match?.[1]) throw new Error(`history object ${commit} is not a commit`);
  return match[1];
}

/** The branch HEAD points at ("refs/heads/main"). */
function headRef(gitdir: string): string {
  const head = readFileSync(join(gitdir, 'HEAD'), 'utf8').trim();
  const match = /^ref: (refs\/heads\/[\w./-]+)$/.exec(head);
  if (!match?.[1]) throw new Error(`the job history's HEAD is not on a branch (${head.slice(0, 60)})`);
  return match[1];
}

/**
 * Commits the folder's current content on HEAD's branch and returns the commit; when nothing changed
 * since HEAD, returns HEAD without a new commit. Synchronous file calls, for the reason given at
 * writeFileAtomic (fs/atomicWrite.ts): a commit of a new job is ~80 small-file calls.
 */
/** Who a history commit names as its author (jobHistory.ts passes its default). */
export interface HistoryAuthor {
  name: string;
  email: string;
}

export function commitSnapshot(
  dir: string,
  gitdir: string,
  message: string,
  author: HistoryAuthor,
  now: Date = new Date(),
): string {
  const ref = headRef(gitdir);
  const parent = readRef(gitdir, ref);
  const previous = parent === undefined ? undefined : treeOf(gitdir, parent);
  const added = new NewObjects();
  const tree = writeTree(gitdir, dir, previous, added) ?? added.add('tree', Buffer.alloc(0));
  if (parent !== undefined && previous === tree) return parent;
  const signature = `${author.name} <${author.email}> ${Math.floor(now.getTime() / 1000)} +0000`;
  const body = [
    `tree ${tree}`,
    ...(parent ? [`parent ${parent}`] : []),
    `author ${signature}`,
    `committer ${signature}`,
    '',
    message.endsWith('\n') ? message : `${message}\n`,
  ].join('\n');
  const commit = added.add('commit', Buffer.from(body, 'utf8'));
  // Objects first, the branch last: a reader (or a kill -9 in between) never finds a commit without its objects.
  writePack(gitdir, added.list());
  mkdirSync(join(gitdir, ref, '..'), { recursive: true });
  writeFileAtomicSync(join(gitdir, ref), `${commit}\n`);
  return commit;
}
