/**
 * The foreign-key graph of a schema (undirected: a join works both ways), and shortest join paths in it,
 * so that the tables between two matched ones (customer → invoice → invoice_line → track → genre) are given
 * to the model too, and a match that joins other matches counts more than an isolated look-alike.
 */

export class FkGraph {
  private readonly adjacency: number[][];

  constructor(size: number) {
    this.adjacency = Array.from({ length: size }, () => []);
  }

  addEdge(a: number, b: number): void {
    if (a === b) return;
    const from = this.adjacency[a];
    const to = this.adjacency[b];
    if (!from || !to || from.includes(b)) return;
    from.push(b);
    to.push(a);
  }

  /** The graph as stored with the schema cache (the persisted linking index): every node's neighbours, in order. */
  toLists(): number[][] {
    return this.adjacency.map((list) => [...list]);
  }

  /** The graph toLists() gave, the same down to the order of each node's neighbours (paths are found in it). */
  static fromLists(lists: readonly (readonly number[])[]): FkGraph {
    const graph = new FkGraph(0);
    for (const list of lists) graph.adjacency.push([...list]);
    return graph;
  }

  neighbours(node: number): readonly number[] {
    return this.adjacency[node] ?? [];
  }

  /**
   * Shortest paths (in edges, at most `maxHops`) from `source` to each of `targets` it reaches, each as the
   * list of nodes strictly between the two ends. Breadth-first, stopping once every target is found.
   */
  pathsFrom(source: number, targets: ReadonlySet<number>, maxHops: number): Map<number, number[]> {
    const parent = new Map<number, number>([[source, -1]]);
    const found = new Map<number, number[]>();
    let frontier = [source];
    for (let hop = 1; hop <= maxHops && frontier.length > 0 && found.size < targets.size; hop++) {
      const next: number[] = [];
      for (const node of frontier) {
        for (const n of this.neighbours(node)) {
          if (parent.has(n)) continue;
          parent.set(n, node);
          next.push(n);
          if (targets.has(n) && n !== source) {
            const between: number[] = [];
            for (let at = node; at !== source && at !== -1; at = parent.get(at) ?? -1) between.push(at);
            found.set(n, between.reverse());
          }
        }
      }
      frontier = next;
    }
    return found;
  }
}
