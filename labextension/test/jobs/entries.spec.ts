/**
 * The Jobs section's one list: jobs and sweeps merged newest first.
 */
import type { IJob, IPipeline, ISweep } from '../../src/api/types';
import { JobEntry, mergeEntries } from '../../src/jobs/entries';

const job = (id: string, at: number): IJob =>
  ({ id, created_at: at, group_id: null }) as IJob;
const sweep = (id: string, at: number): ISweep =>
  ({ id, created_at: at }) as ISweep;
const ids = (entries: JobEntry[]): string[] =>
  entries.map(e => (e.kind === 'job' ? e.job.id : `sweep:${e.id}`));

describe('mergeEntries', () => {
  it('merges both lists newest first, each sweep once', () => {
    const entries = mergeEntries(
      { items: [job('a', 30), job('b', 10)], total: 2 },
      { items: [sweep('s', 20)], total: 1 }
    );
    expect(ids(entries)).toEqual(['a', 'sweep:s', 'b']);
    expect(entries[1]).toEqual({
      kind: 'sweep',
      id: 's',
      sweep: sweep('s', 20),
      runs: []
    });
  });

  it('puts sweeps just submitted among the listed ones', () => {
    expect(
      ids(
        mergeEntries(
          { items: [job('a', 30)], total: 1 },
          { items: [sweep('s', 20)], total: 1 },
          [sweep('new', 40)]
        )
      )
    ).toEqual(['sweep:new', 'a', 'sweep:s']);
  });

  it('holds back what is older than the last entry of a list with more pages', () => {
    // Jobs have a second page: the sweep older than their last entry waits.
    expect(
      ids(
        mergeEntries(
          { items: [job('a', 30), job('b', 20)], total: 5 },
          { items: [sweep('s', 25), sweep('old', 5)], total: 2 }
        )
      )
    ).toEqual(['a', 'sweep:s', 'b']);
    // And the other way round.
    expect(
      ids(
        mergeEntries(
          { items: [job('a', 30), job('old', 1)], total: 2 },
          { items: [sweep('s', 10)], total: 3 }
        )
      )
    ).toEqual(['a', 'sweep:s']);
  });

  it('is empty for empty lists', () => {
    expect(
      mergeEntries({ items: [], total: 0 }, { items: [], total: 4 })
    ).toEqual([]);
  });
});

describe('mergeEntries with pipelines', () => {
  const pipeline = (id: string, at: number): IPipeline =>
    ({ id, created_at: at }) as IPipeline;
  const all = (entries: JobEntry[]): string[] =>
    entries.map(e => (e.kind === 'job' ? e.job.id : `${e.kind}:${e.id}`));

  it('lists each pipeline once among jobs and sweeps, newest first', () => {
    const entries = mergeEntries(
      { items: [job('a', 30), job('b', 10)], total: 2 },
      { items: [sweep('s', 20)], total: 1 },
      [],
      { items: [pipeline('p', 25), pipeline('q', 5)], total: 2 }
    );
    expect(all(entries)).toEqual([
      'a',
      'pipeline:p',
      'sweep:s',
      'b',
      'pipeline:q'
    ]);
    expect(entries[1]).toEqual({
      kind: 'pipeline',
      id: 'p',
      pipeline: pipeline('p', 25)
    });
  });

  it('shows one just submitted until a page has it, then the listed copy', () => {
    const fresh = { ...pipeline('new', 40), state: 'queued' } as IPipeline;
    const listed = { ...pipeline('new', 40), state: 'running' } as IPipeline;
    const before = mergeEntries(
      { items: [job('a', 30)], total: 1 },
      { items: [], total: 0 },
      [],
      { items: [], total: 0 },
      [fresh]
    );
    expect(all(before)).toEqual(['pipeline:new', 'a']);
    const after = mergeEntries(
      { items: [job('a', 30)], total: 1 },
      { items: [], total: 0 },
      [],
      { items: [listed], total: 1 },
      [fresh]
    );
    expect(after).toHaveLength(2);
    expect(after[0]).toEqual({ kind: 'pipeline', id: 'new', pipeline: listed });
  });

  it('leaves out what is older than the last pipeline of a longer list', () => {
    const entries = mergeEntries(
      { items: [job('a', 30), job('b', 10)], total: 2 },
      { items: [], total: 0 },
      [],
      { items: [pipeline('p', 20)], total: 5 }
    );
    expect(all(entries)).toEqual(['a', 'pipeline:p']);
  });

  it('lists jobs, sweeps and pipelines in one order (the Jobs table)', () => {
    const entries = mergeEntries(
      { items: [job('a', 30)], total: 1 },
      { items: [sweep('s', 20)], total: 1 },
      [],
      { items: [pipeline('p', 25)], total: 1 }
    );
    expect(entries.map(e => e.kind)).toEqual(['job', 'pipeline', 'sweep']);
  });
});
