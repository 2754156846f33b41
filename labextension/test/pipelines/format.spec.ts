/**
 * A pipeline node's progress and duration, the nodes ended, the counts.
 */
import type { IPipeline, IPipelineNode } from '../../src/api/types';
import {
  describeNodeCounts,
  isNodeActive,
  nodeDuration,
  nodeProgress,
  nodesEnded
} from '../../src/pipelines/format';

const node = (fields: Partial<IPipelineNode>): IPipelineNode =>
  ({
    id: 'n',
    kind: 'job',
    name: 'n',
    state: 'waiting',
    counts: {},
    cells_done: 0,
    cells_total: 0,
    started_at: null,
    finished_at: null,
    attempts: 1,
    ...fields
  }) as IPipelineNode;

describe('nodeProgress', () => {
  it("counts a job's cells once the runner knows them", () => {
    expect(nodeProgress(node({}))).toBeNull();
    expect(nodeProgress(node({ cells_done: 3, cells_total: 4 }))).toEqual({
      fraction: 0.75,
      text: '3/4 cells'
    });
    expect(nodeProgress(node({ cells_done: 9, cells_total: 4 }))?.text).toBe(
      '4/4 cells'
    );
  });

  it("counts a sweep's runs ended of all", () => {
    const sweep = node({
      kind: 'sweep',
      counts: { succeeded: 1, failed: 1, running: 1, queued: 1 }
    });
    expect(nodeProgress(sweep)).toEqual({
      fraction: 0.5,
      text: '2 of 4 runs'
    });
    expect(
      nodeProgress(node({ kind: 'sweep', counts: { queued: 1 } }))
    ).toEqual({ fraction: 0, text: '0 of 1 run' });
    expect(nodeProgress(node({ kind: 'sweep' }))).toBeNull();
  });
});

describe('nodeDuration', () => {
  it('runs until now, or until the node finished', () => {
    expect(nodeDuration(node({}), 100)).toBeNull();
    expect(nodeDuration(node({ started_at: 100 }), 140)).toBe('40 s');
    expect(
      nodeDuration(node({ started_at: 100, finished_at: 820 }), 5000)
    ).toBe('12 min');
  });
});

describe('nodesEnded and the counts', () => {
  it('counts skipped nodes as ended, waiting ones not', () => {
    const pipeline = {
      nodes: [
        node({ state: 'succeeded' }),
        node({ state: 'skipped' }),
        node({ state: 'waiting' }),
        node({ state: 'running' })
      ]
    } as IPipeline;
    expect(nodesEnded(pipeline)).toEqual({ ended: 2, total: 4 });
    expect(isNodeActive('waiting')).toBe(true);
    expect(isNodeActive('skipped')).toBe(false);
  });

  it('says the counts in a fixed order', () => {
    expect(
      describeNodeCounts({ waiting: 1, succeeded: 2, failed: 0, running: 1 })
    ).toBe('2 succeeded, 1 running, 1 waiting');
    expect(describeNodeCounts({})).toBe('');
  });
});
