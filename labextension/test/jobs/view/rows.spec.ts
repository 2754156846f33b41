/**
 * The Jobs view's table as data: each row's facts, the text and state
 * filters (a sweep kept for its runs), the sort by a column.
 */
import type { IJob, IJobGpuUsage, ISweep } from '../../../src/api/types';
import {
  IRowFacts,
  TableRow,
  describeGpuMeanPeak,
  filterRows,
  jobFacts,
  matches,
  nextSort,
  sortRows,
  sweepFacts
} from '../../../src/jobs/view/rows';

const NOW = 10000;

function job(fields: Partial<IJob> & { id: string }): IJob {
  return {
    name: fields.id,
    state: 'succeeded',
    backend: 'local',
    notebook_path: `${fields.id}.ipynb`,
    parameters: {},
    created_at: 100,
    started_at: 200,
    finished_at: 260,
    queue_position: null,
    gpu: null,
    ...fields
  } as IJob;
}

const row = (j: IJob): TableRow => ({
  kind: 'job',
  id: j.id,
  job: j,
  facts: jobFacts(j, NOW)
});

const names = (rows: TableRow[]): string[] => rows.map(r => r.facts.name);

describe('jobFacts', () => {
  it('reads the columns of a job', () => {
    const facts = jobFacts(
      job({
        id: 'train',
        state: 'running',
        finished_at: null,
        parameters: { lr: 0.01, epochs: 3 }
      }),
      NOW
    );
    expect(facts).toMatchObject({
      name: 'train',
      state: 'running',
      backend: 'local',
      queue: null,
      started: 200,
      duration: NOW - 200,
      gpu: null,
      energy: null,
      parameters: 'lr=0.01 · epochs=3'
    });
    expect(facts.search).toContain('train.ipynb');
  });

  it('gives a queued job its place and no duration', () => {
    const facts = jobFacts(
      job({
        id: 'q',
        state: 'queued',
        started_at: null,
        finished_at: null,
        queue_position: 3
      }),
      NOW
    );
    expect(facts.queue).toBe(3);
    expect(facts.started).toBeNull();
    expect(facts.duration).toBeNull();
  });
});

describe('sweepFacts', () => {
  const sweep = {
    varied: ['alpha'],
    notebook_path: 'sq.ipynb',
    parameters: { beta: 2 },
    finished_at: null
  } as unknown as ISweep;

  it('starts with its first run; a running sweep has no queue place', () => {
    const runs = [
      job({ id: 'r1', state: 'running', started_at: 500, finished_at: null }),
      job({
        id: 'r2',
        state: 'queued',
        started_at: null,
        finished_at: null,
        queue_position: 2
      })
    ];
    const facts = sweepFacts(
      { name: 'sq', state: 'running', backend: 'slurm', sweep },
      runs,
      NOW
    );
    expect(facts).toMatchObject({
      started: 500,
      duration: NOW - 500,
      queue: null, // its waiting runs wait for its own runs, not the queue
      parameters: 'varies alpha'
    });
    expect(facts.search).toContain('beta=2');
  });

  it('a sweep waiting whole waits at its first queued place', () => {
    const runs = [3, 2].map(place =>
      job({
        id: `r${place}`,
        state: 'queued',
        started_at: null,
        finished_at: null,
        queue_position: place
      })
    );
    const facts = sweepFacts(
      { name: 'sq', state: 'queued', backend: 'slurm', sweep },
      runs,
      NOW
    );
    expect(facts.queue).toBe(2);
  });

  it('ends with its last run', () => {
    const runs = [
      job({ id: 'r1', started_at: 500, finished_at: 600 }),
      job({ id: 'r2', started_at: 510, finished_at: 700 })
    ];
    const facts = sweepFacts(
      { name: 'sq', state: 'succeeded', backend: 'local', sweep: null },
      runs,
      NOW
    );
    expect(facts.duration).toBe(200);
  });
});

describe('filters', () => {
  const a = job({ id: 'alpha', parameters: { lr: 0.1 } });
  const b = job({ id: 'beta', state: 'failed' });
  const c = job({ id: 'gamma', state: 'running', finished_at: null });

  it('matches every word of the text in name, notebook or parameters', () => {
    const rows = [a, b, c].map(row);
    expect(names(filterRows(rows, { text: 'LR=0.1', state: 'all' }))).toEqual([
      'alpha'
    ]);
    expect(
      names(filterRows(rows, { text: 'gamma.ipynb', state: 'all' }))
    ).toEqual(['gamma']);
    expect(names(filterRows(rows, { text: 'alpha lr', state: 'all' }))).toEqual(
      ['alpha']
    );
    expect(filterRows(rows, { text: 'alpha beta', state: 'all' })).toEqual([]);
  });

  it('filters by one state, or by queued and running', () => {
    const rows = [a, b, c].map(row);
    expect(names(filterRows(rows, { text: '', state: 'failed' }))).toEqual([
      'beta'
    ]);
    expect(names(filterRows(rows, { text: '', state: 'active' }))).toEqual([
      'gamma'
    ]);
    expect(filterRows(rows, { text: '', state: 'all' })).toHaveLength(3);
  });

  it('keeps a sweep for its runs, with only those that match', () => {
    const runs = [
      job({ id: 'sq [alpha=1]', state: 'failed' }),
      job({ id: 'sq [alpha=2]' })
    ];
    const sweepRow: TableRow = {
      kind: 'sweep',
      id: 's',
      sweep: null,
      facts: sweepFacts(
        { name: 'sq', state: 'failed', backend: 'local', sweep: null },
        runs,
        NOW
      ),
      runs: runs.map(r => ({ job: r, facts: jobFacts(r, NOW) }))
    };
    const [kept] = filterRows([sweepRow], { text: 'alpha=2', state: 'all' });
    expect(kept.kind === 'sweep' && kept.runs?.map(r => r.job.id)).toEqual([
      'sq [alpha=2]'
    ]);
    // The sweep itself matches: every run stays.
    const [whole] = filterRows([sweepRow], { text: 'sq', state: 'all' });
    expect(whole.kind === 'sweep' && whole.runs).toHaveLength(2);
    expect(
      filterRows([sweepRow], { text: 'nothing', state: 'all' })
    ).toHaveLength(0);
  });

  it('reads a state filter of a row alone', () => {
    const facts = { state: 'queued', search: 'x' } as IRowFacts;
    expect(matches(facts, { text: '', state: 'active' })).toBe(true);
    expect(matches(facts, { text: '', state: 'running' })).toBe(false);
  });
});

describe('sortRows', () => {
  const rows = [
    job({ id: 'b10', started_at: 300, state: 'succeeded' }),
    job({
      id: 'a2',
      started_at: null,
      finished_at: null,
      state: 'queued',
      queue_position: 1
    }),
    job({ id: 'b9', started_at: 100, state: 'running', finished_at: null })
  ].map(row);

  it('keeps the newest-first order without a sort', () => {
    expect(names(sortRows(rows, null))).toEqual(['b10', 'a2', 'b9']);
  });

  it('sorts names in natural order, both ways', () => {
    expect(
      names(sortRows(rows, { key: 'name', direction: 'ascending' }))
    ).toEqual(['a2', 'b9', 'b10']);
    expect(
      names(sortRows(rows, { key: 'name', direction: 'descending' }))
    ).toEqual(['b10', 'b9', 'a2']);
  });

  it('keeps rows without a value last, either way', () => {
    expect(
      names(sortRows(rows, { key: 'started', direction: 'ascending' }))
    ).toEqual(['b9', 'b10', 'a2']);
    expect(
      names(sortRows(rows, { key: 'started', direction: 'descending' }))
    ).toEqual(['b10', 'b9', 'a2']);
  });

  it('sorts by energy, the largest first, the unmeasured last', () => {
    const drew = (id: string, joules: number | null): TableRow =>
      row(
        job({
          id,
          gpu: {
            available: true,
            energy_joules: joules,
            energy_source: joules === null ? null : 'counter'
          } as IJobGpuUsage
        })
      );
    const measured = [
      drew('small', 3600),
      drew('none', null),
      drew('large', 7.2e6),
      ...rows
    ];
    expect(measured[2].facts.energy).toBe(7.2e6);
    expect(nextSort(null, 'energy').direction).toBe('descending');
    expect(
      names(sortRows(measured, { key: 'energy', direction: 'descending' }))
    ).toEqual(['large', 'small', 'none', 'b10', 'a2', 'b9']);
    expect(
      names(sortRows(measured, { key: 'energy', direction: 'ascending' }))
    ).toEqual(['small', 'large', 'none', 'b10', 'a2', 'b9']);
  });

  it('sorts states active first', () => {
    expect(
      names(sortRows(rows, { key: 'state', direction: 'ascending' }))
    ).toEqual(['b9', 'a2', 'b10']);
  });

  it('does not change the rows it is given', () => {
    sortRows(rows, { key: 'name', direction: 'ascending' });
    expect(names(rows)).toEqual(['b10', 'a2', 'b9']);
  });
});

describe('nextSort', () => {
  it('starts names ascending and figures descending, then flips', () => {
    expect(nextSort(null, 'name')).toEqual({
      key: 'name',
      direction: 'ascending'
    });
    expect(nextSort(null, 'duration').direction).toBe('descending');
    expect(
      nextSort({ key: 'name', direction: 'ascending' }, 'name').direction
    ).toBe('descending');
    expect(nextSort({ key: 'name', direction: 'descending' }, 'state')).toEqual(
      { key: 'state', direction: 'ascending' }
    );
  });
});

describe('describeGpuMeanPeak', () => {
  const gpu = (fields: Partial<IJobGpuUsage>): IJobGpuUsage =>
    ({
      available: true,
      samples: 10,
      mean_utilization_percent: 23.4,
      peak_utilization_percent: 81,
      peak_memory_bytes: 3.1 * 1024 ** 3,
      memory_total_bytes: 80 * 1024 ** 3,
      ...fields
    }) as IJobGpuUsage;

  it('says the mean and peak use and the peak memory', () => {
    expect(describeGpuMeanPeak(gpu({}))).toBe(
      '23% avg · 81% peak · 3.1 of 80 GiB'
    );
  });

  it('says nothing without samples', () => {
    expect(describeGpuMeanPeak(null)).toBeNull();
    expect(describeGpuMeanPeak(gpu({ samples: 0 }))).toBeNull();
    expect(describeGpuMeanPeak(gpu({ available: false }))).toBeNull();
  });
});
