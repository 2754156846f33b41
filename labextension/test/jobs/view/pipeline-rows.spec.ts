/**
 * A pipeline in the Jobs view's table as data: its row's facts (its
 * nodes' backends, its start and duration, what the text filter finds),
 * its nodes' facts, the filters (a pipeline kept for its nodes) and the
 * sort among jobs.
 */
import type { IJob, IPipeline, IPipelineNode } from '../../../src/api/types';
import {
  TableRow,
  filterRows,
  isActiveRowState,
  jobFacts,
  matches,
  nodeFacts,
  pipelineFacts,
  sortRows
} from '../../../src/jobs/view/rows';

const NOW = 10000;

function node(fields: Partial<IPipelineNode> & { id: string }): IPipelineNode {
  return {
    name: fields.id,
    kind: 'job',
    state: 'succeeded',
    backend: 'local',
    notebook_path: `${fields.id}.ipynb`,
    after: [],
    when: 'succeeded',
    attempts: 1,
    cells_done: 0,
    cells_total: 0,
    counts: {},
    group_id: null,
    job_id: `job-${fields.id}`,
    job_dir: null,
    message: '',
    started_at: 200,
    finished_at: 260,
    ...fields
  } as IPipelineNode;
}

function pipeline(
  fields: Partial<IPipeline> & { id: string; nodes: IPipelineNode[] }
): IPipeline {
  return {
    name: fields.id,
    state: 'succeeded',
    counts: {},
    created_at: 100,
    file_path: null,
    finished_at: null,
    cancelled_at: null,
    schedule_id: null,
    ...fields
  } as IPipeline;
}

/** The diamond of the UI tests: prepare, left and right (on slurm), report. */
const DIAMOND = [
  node({ id: 'prepare', started_at: 200, finished_at: 230 }),
  node({
    id: 'left',
    notebook_path: 'analysis/left.ipynb',
    after: ['prepare'],
    started_at: 240,
    finished_at: 300
  }),
  node({
    id: 'right',
    backend: 'slurm',
    after: ['prepare'],
    state: 'running',
    started_at: 250,
    finished_at: null
  }),
  node({
    id: 'report',
    after: ['left', 'right'],
    state: 'waiting',
    started_at: null,
    finished_at: null
  })
];

function pipelineRow(p: IPipeline, expanded = true): TableRow {
  return {
    kind: 'pipeline',
    id: p.id,
    pipeline: p,
    facts: pipelineFacts(p, NOW),
    nodes: expanded
      ? p.nodes.map(n => ({ node: n, facts: nodeFacts(n, NOW) }))
      : null
  };
}

function jobRow(id: string, state: IJob['state'], started: number): TableRow {
  const job = {
    id,
    name: id,
    state,
    backend: 'local',
    notebook_path: `${id}.ipynb`,
    parameters: {},
    created_at: 100,
    started_at: started,
    finished_at: null,
    queue_position: null,
    gpu: null
  } as unknown as IJob;
  return { kind: 'job', id, job, facts: jobFacts(job, NOW) };
}

const nodeIds = (row: TableRow | undefined): string[] | null =>
  row?.kind === 'pipeline' ? (row.nodes?.map(n => n.node.id) ?? null) : null;

describe('pipelineFacts', () => {
  it('reads the columns of a running pipeline from its nodes', () => {
    const facts = pipelineFacts(
      pipeline({ id: 'diamond', state: 'running', nodes: DIAMOND }),
      NOW
    );
    expect(facts).toMatchObject({
      name: 'diamond',
      state: 'running',
      backend: 'local, slurm',
      queue: null,
      started: 200,
      duration: NOW - 200,
      gpu: null,
      parameters: ''
    });
  });

  it('ends when the pipeline did, or with its last node', () => {
    const ended = DIAMOND.map(n => ({
      ...n,
      state: 'succeeded' as const,
      started_at: n.started_at ?? 310,
      finished_at: n.finished_at ?? 400
    }));
    expect(
      pipelineFacts(pipeline({ id: 'p', nodes: ended, finished_at: 420 }), NOW)
        .duration
    ).toBe(220);
    expect(
      pipelineFacts(pipeline({ id: 'p', nodes: ended }), NOW).duration
    ).toBe(200);
  });

  it('has no start nor duration before a node starts', () => {
    const waiting = DIAMOND.map(n => ({
      ...n,
      state: 'waiting' as const,
      started_at: null,
      finished_at: null
    }));
    const facts = pipelineFacts(
      pipeline({ id: 'p', state: 'queued', nodes: waiting }),
      NOW
    );
    expect(facts.started).toBeNull();
    expect(facts.duration).toBeNull();
  });

  it('is found by its name, its file and its nodes', () => {
    const facts = pipelineFacts(
      pipeline({
        id: 'nightly',
        file_path: 'jobs/nightly.pipeline.yaml',
        nodes: DIAMOND
      }),
      NOW
    );
    for (const text of ['nightly', 'pipeline.yaml', 'REPORT', 'left.ipynb']) {
      expect(matches(facts, { text, state: 'all' })).toBe(true);
    }
    expect(matches(facts, { text: 'train', state: 'all' })).toBe(false);
  });
});

describe('nodeFacts', () => {
  it('reads a node, running or waiting', () => {
    expect(nodeFacts(DIAMOND[2], NOW)).toMatchObject({
      name: 'right',
      state: 'running',
      backend: 'slurm',
      started: 250,
      duration: NOW - 250
    });
    expect(nodeFacts(DIAMOND[3], NOW)).toMatchObject({
      state: 'waiting',
      started: null,
      duration: null
    });
  });

  it('counts a waiting node as active, a skipped one as ended', () => {
    expect(isActiveRowState('waiting')).toBe(true);
    expect(isActiveRowState('queued')).toBe(true);
    expect(isActiveRowState('skipped')).toBe(false);
    expect(isActiveRowState('succeeded')).toBe(false);
  });
});

describe('filters and sort with pipelines', () => {
  const running = pipeline({ id: 'diamond', state: 'running', nodes: DIAMOND });

  it('keeps a pipeline that passes with all its nodes', () => {
    const kept = filterRows([pipelineRow(running)], {
      text: '',
      state: 'active'
    });
    expect(nodeIds(kept[0])).toEqual(['prepare', 'left', 'right', 'report']);
  });

  it('keeps a pipeline for its listed nodes, with only those', () => {
    const kept = filterRows([pipelineRow(running)], {
      text: '',
      state: 'succeeded'
    });
    expect(nodeIds(kept[0])).toEqual(['prepare', 'left']);
    expect(
      filterRows([pipelineRow(running, false)], {
        text: '',
        state: 'succeeded'
      })
    ).toEqual([]);
  });

  it('finds a collapsed pipeline by a node name', () => {
    const kept = filterRows([pipelineRow(running, false)], {
      text: 'report',
      state: 'all'
    });
    expect(kept.map(r => r.id)).toEqual(['diamond']);
  });

  it('sorts a pipeline among jobs by its facts', () => {
    const rows = [
      jobRow('late', 'running', 500),
      pipelineRow(running),
      jobRow('early', 'failed', 100)
    ];
    const ids = (sorted: TableRow[]) => sorted.map(r => r.id);
    expect(
      ids(sortRows(rows, { key: 'started', direction: 'ascending' }))
    ).toEqual(['early', 'diamond', 'late']);
    expect(
      ids(sortRows(rows, { key: 'state', direction: 'ascending' }))
    ).toEqual(['late', 'diamond', 'early']);
    expect(
      ids(sortRows(rows, { key: 'backend', direction: 'descending' }))
    ).toEqual(['diamond', 'late', 'early']);
  });
});
