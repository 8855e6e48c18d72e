import dagre from '@dagrejs/dagre';
import type { LineageResponse } from '@assay/client/browser';

export type LineageNode = LineageResponse['nodes'][number];

/** A node with its box centre, ready to draw. */
export interface PlacedNode extends LineageNode {
  x: number;
  y: number;
}

export interface PlacedEdge {
  key: string;
  points: Array<{ x: number; y: number }>;
}

export interface LineageLayout {
  width: number;
  height: number;
  nodes: PlacedNode[];
  edges: PlacedEdge[];
}

export const NODE_WIDTH = 220;
export const NODE_HEIGHT = 56;
const MARGIN = 16;

/** Ranks the lineage top to bottom (ancestors above, descendants below) with dagre's layered layout. */
export function layOutLineage(lineage: LineageResponse): LineageLayout {
  const g = new dagre.graphlib.Graph<object, { width: number; height: number }>();
  g.setGraph({ rankdir: 'TB', nodesep: 24, ranksep: 48, marginx: MARGIN, marginy: MARGIN });
  g.setDefaultEdgeLabel(() => ({}));
  for (const n of lineage.nodes) g.setNode(n.id, { width: NODE_WIDTH, height: NODE_HEIGHT });
  // An edge can name a node past the depth limit; drawing it would invent a box with no name.
  const known = new Set(lineage.nodes.map((n) => n.id));
  const edges = lineage.edges.filter((e) => known.has(e.parent_id) && known.has(e.child_id));
  for (const e of edges) g.setEdge(e.parent_id, e.child_id);
  dagre.layout(g);
  const graph = g.graph() as { width?: number; height?: number };
  return {
    width: Math.ceil(graph.width ?? 0),
    height: Math.ceil(graph.height ?? 0),
    nodes: lineage.nodes.map((n) => {
      const placed = g.node(n.id) as { x: number; y: number };
      return { ...n, x: placed.x, y: placed.y };
    }),
    edges: edges.map((e) => ({
      key: `${e.parent_id}>${e.child_id}`,
      points: (g.edge(e.parent_id, e.child_id) as { points?: Array<{ x: number; y: number }> }).points ?? [],
    })),
  };
}
