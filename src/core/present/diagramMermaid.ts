/**
 * The schema diagram's graph as a Mermaid `erDiagram` (`pg-agent schema --diagram mermaid`): paste it in a
 * Markdown file and GitHub, GitLab or any Mermaid renderer draws it. Names are reduced to the characters Mermaid
 * reads in an entity or attribute (others become `_`); each relation is labelled with its constraint.
 */
import type { DiagramGraph } from '../../shared/diagramProtocol';

const word = (text: string) => text.replace(/[^A-Za-z0-9_-]/g, '_');
const typeWord = (text: string) => text.replace(/[^A-Za-z0-9_()[\]-]/g, '_');

export function diagramMermaid(graph: DiagramGraph): string {
  const entity = (id: string) => word(id.replace('.', '__'));
  const lines = ['erDiagram', `  %% ${graph.note.replace(/[\r\n]/g, ' ')}`];
  for (const t of graph.tables) {
    lines.push(`  ${entity(t.id)} {`);
    for (const c of t.columns) {
      const keys = [c.pk ? 'PK' : '', c.fk ? 'FK' : ''].filter((k) => k !== '').join(', ');
      lines.push(`    ${typeWord(c.type)} ${word(c.name)}${keys ? ` ${keys}` : ''}`);
    }
    if (t.moreColumns > 0) lines.push(`    more columns_${t.moreColumns}`);
    lines.push('  }');
  }
  for (const e of graph.edges)
    lines.push(`  ${entity(e.from)} }o--|| ${entity(e.to)} : "${e.name.replace(/["\r\n]/g, '_')}"`);
  return `${lines.join('\n')}\n`;
}
