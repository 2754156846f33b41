/**
 * The pipeline graph's layout: dagre's boxes and edges, parents above.
 */
import { edgePath, layoutGraph } from '../../../src/pipelines/graph/layout';

const SIZE = { nodeWidth: 200, nodeHeight: 80 };

describe('layoutGraph', () => {
  const diamond = [
    { id: 'prepare', after: [] },
    { id: 'train', after: ['prepare'] },
    { id: 'check', after: ['prepare'] },
    { id: 'report', after: ['train', 'check'] }
  ];

  it('gives every node a box of the size asked, parents above children', () => {
    const laid = layoutGraph(diamond, SIZE);
    expect(laid.boxes.map(b => b.id)).toEqual(diamond.map(n => n.id));
    const box = Object.fromEntries(laid.boxes.map(b => [b.id, b]));
    for (const b of laid.boxes) {
      expect(b.width).toBe(200);
      expect(b.height).toBe(80);
      expect(b.x).toBeGreaterThanOrEqual(0);
      expect(b.y).toBeGreaterThanOrEqual(0);
      expect(b.x + b.width).toBeLessThanOrEqual(laid.width);
      expect(b.y + b.height).toBeLessThanOrEqual(laid.height);
    }
    expect(box.train.y).toBeGreaterThan(box.prepare.y + 80);
    expect(box.train.y).toBe(box.check.y);
    expect(box.report.y).toBeGreaterThan(box.train.y + 80);
    // Siblings side by side, not overlapping.
    expect(Math.abs(box.train.x - box.check.x)).toBeGreaterThanOrEqual(200);
  });

  it('draws one edge per parent, from the parent down to the child', () => {
    const laid = layoutGraph(diamond, SIZE);
    expect(laid.edges.map(e => `${e.from}>${e.to}`).sort()).toEqual([
      'check>report',
      'prepare>check',
      'prepare>train',
      'train>report'
    ]);
    for (const edge of laid.edges) {
      expect(edge.points.length).toBeGreaterThanOrEqual(2);
      const first = edge.points[0];
      const last = edge.points[edge.points.length - 1];
      expect(last.y).toBeGreaterThan(first.y);
    }
  });

  it('ignores unknown parents and repeated ones, and lays out no nodes', () => {
    const laid = layoutGraph(
      [
        { id: 'a', after: ['gone'] },
        { id: 'b', after: ['a', 'a'] }
      ],
      SIZE
    );
    expect(laid.edges).toHaveLength(1);
    expect(layoutGraph([], { ...SIZE, margin: 10 })).toEqual({
      boxes: [],
      edges: [],
      width: 20,
      height: 20
    });
  });

  it('is the same for the same graph', () => {
    expect(layoutGraph(diamond, SIZE)).toEqual(layoutGraph(diamond, SIZE));
  });
});

describe('edgePath', () => {
  it('joins the points as an SVG path', () => {
    expect(
      edgePath([
        { x: 1, y: 2 },
        { x: 3.456, y: 4 }
      ])
    ).toBe('M 1 2 L 3.5 4');
    expect(edgePath([])).toBe('');
  });
});
