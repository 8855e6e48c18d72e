import type { LineageResponse } from '@assay/client/browser';
import { useMemo, type MouseEvent } from 'react';
import { useLocation, useRouter } from 'wouter';
import { layOutLineage, NODE_HEIGHT, NODE_WIDTH, type PlacedNode } from '../lineage-layout.ts';

const NAME_CHARS = 26;

/** The lineage as an SVG: dagre places the boxes, each box is a link to its experiment. */
export function LineageGraph({ lineage }: { lineage: LineageResponse }) {
  const layout = useMemo(() => layOutLineage(lineage), [lineage]);
  return (
    <div className="lineage-scroll">
      <svg
        className="lineage-graph"
        width={layout.width}
        height={layout.height}
        viewBox={`0 0 ${layout.width} ${layout.height}`}
        role="group"
        aria-label="Lineage graph: parents above, children below"
      >
        <defs>
          <marker
            id="lineage-arrow"
            viewBox="0 0 10 10"
            refX="10"
            refY="5"
            markerWidth="8"
            markerHeight="8"
            orient="auto-start-reverse"
          >
            <path d="M 0 0 L 10 5 L 0 10 z" className="lineage-arrowhead" />
          </marker>
        </defs>
        {layout.edges.map((e) => (
          <polyline
            key={e.key}
            className="lineage-edge"
            points={e.points.map((p) => `${p.x},${p.y}`).join(' ')}
            markerEnd="url(#lineage-arrow)"
          />
        ))}
        {layout.nodes.map((n) => (
          <NodeBox key={n.id} node={n} />
        ))}
      </svg>
    </div>
  );
}

function NodeBox({ node }: { node: PlacedNode }) {
  const [, navigate] = useLocation();
  const { base } = useRouter();
  const path = `/experiments/${encodeURIComponent(node.id)}`;
  // A real href keeps middle-click and "open in new tab"; a plain click stays in the app.
  const onClick = (e: MouseEvent) => {
    if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(path);
  };
  const name = node.name.length > NAME_CHARS ? `${node.name.slice(0, NAME_CHARS - 1)}…` : node.name;
  const left = node.x - NODE_WIDTH / 2;
  const top = node.y - NODE_HEIGHT / 2;
  return (
    <a
      href={`${base}${path}`}
      onClick={onClick}
      className={`lineage-node relation-${node.relation}`}
      aria-label={`${node.name} (${node.relation}, ${node.state})`}
      aria-current={node.relation === 'self' ? 'page' : undefined}
      data-experiment-id={node.id}
    >
      <title>{node.name}</title>
      <rect x={left} y={top} width={NODE_WIDTH} height={NODE_HEIGHT} rx={6} />
      <text x={node.x} y={top + 22} textAnchor="middle" className="lineage-name">
        {name}
      </text>
      <text x={node.x} y={top + 42} textAnchor="middle" className="lineage-meta">
        {node.relation === 'self' ? 'this experiment' : node.relation} · {node.state}
      </text>
    </a>
  );
}
