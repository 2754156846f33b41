/**
 * A pipeline's graph laid out by dagre (pure, no DOM): each node a box of
 * the given size, parents above children, and each edge a polyline from a
 * parent's box to its child's, in the drawing's coordinates (the top-left
 * corner at 0, 0 plus the margin).
 */
import { graphlib, layout } from '@dagrejs/dagre';

/** What the layout needs of a node: its id and its parents' ids. */
export interface IGraphNode {
  id: string;
  after: readonly string[];
}

/** A node's box: its top-left corner and size. */
export interface IBox {
  id: string;
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface IPoint {
  x: number;
  y: number;
}

/** An edge from the parent `from` to the child `to`, as points to join. */
export interface IEdgePath {
  from: string;
  to: string;
  points: IPoint[];
}

/** The laid-out graph: boxes by id (in the nodes' order), edges, its size. */
export interface IGraphLayout {
  boxes: IBox[];
  edges: IEdgePath[];
  width: number;
  height: number;
}

export interface ILayoutOptions {
  /** Every box's size in pixels. */
  nodeWidth: number;
  nodeHeight: number;
  /** Space between ranks (parents and children) and between neighbours. */
  rankSep?: number;
  nodeSep?: number;
  /** Around the whole drawing. */
  margin?: number;
  /** `TB`: parents above (the default); `LR`: parents to the left. */
  direction?: 'TB' | 'LR';
}

/**
 * Lay out `nodes` (parents named in `after`; a parent that is not among the
 * nodes is ignored). The same graph always gives the same drawing.
 */
export function layoutGraph(
  nodes: readonly IGraphNode[],
  options: ILayoutOptions
): IGraphLayout {
  const margin = options.margin ?? 16;
  const graph = new graphlib.Graph();
  graph.setGraph({
    rankdir: options.direction ?? 'TB',
    ranksep: options.rankSep ?? 48,
    nodesep: options.nodeSep ?? 32,
    marginx: margin,
    marginy: margin
  });
  graph.setDefaultEdgeLabel(() => ({}));
  const known = new Set(nodes.map(node => node.id));
  for (const node of nodes) {
    graph.setNode(node.id, {
      width: options.nodeWidth,
      height: options.nodeHeight
    });
  }
  const links: [string, string][] = [];
  for (const node of nodes) {
    for (const parent of new Set(node.after)) {
      if (known.has(parent) && parent !== node.id) {
        graph.setEdge(parent, node.id);
        links.push([parent, node.id]);
      }
    }
  }
  if (nodes.length === 0) {
    return { boxes: [], edges: [], width: 2 * margin, height: 2 * margin };
  }
  layout(graph);
  const boxes = nodes.map((node): IBox => {
    const laid = graph.node(node.id);
    const width = laid.width;
    const height = laid.height;
    return {
      id: node.id,
      x: (laid.x ?? 0) - width / 2,
      y: (laid.y ?? 0) - height / 2,
      width,
      height
    };
  });
  const edges = links.map(([from, to]): IEdgePath => {
    const points: IPoint[] = graph.edge(from, to)?.points ?? [];
    return { from, to, points: points.map(p => ({ x: p.x, y: p.y })) };
  });
  const label = graph.graph();
  const width = Math.max(
    label.width ?? 0,
    ...boxes.map(box => box.x + box.width + margin)
  );
  const height = Math.max(
    label.height ?? 0,
    ...boxes.map(box => box.y + box.height + margin)
  );
  return { boxes, edges, width, height };
}

/** An SVG path through `points` (`M x y L x y …`), rounded to 0.1 px. */
export function edgePath(points: readonly IPoint[]): string {
  const r = (n: number): number => Math.round(n * 10) / 10;
  return points
    .map((p, i) => `${i === 0 ? 'M' : 'L'} ${r(p.x)} ${r(p.y)}`)
    .join(' ');
}
