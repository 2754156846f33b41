/**
 * FollowedSweeps: which sweeps the Jobs list follows, and which rows list
 * their runs.
 */
import type { IJob, ISweep } from '../../../src/api/types';
import { JobsClient } from '../../../src/jobs/client';
import { FollowedSweeps } from '../../../src/jobs/sweeps/followed';
import { job, sweep } from '../../records';

/** A client that answers the runs of any sweep with `runs`. */
function client(runs: IJob[]): JobsClient {
  return {
    listJobs: async () => ({
      items: runs,
      total: runs.length,
      offset: 0,
      limit: 50,
      next_offset: null
    }),
    getSweep: async (id: string) => sweep({ id })
  } as unknown as JobsClient;
}

function page(...items: ISweep[]) {
  return { items, total: items.length };
}

describe('FollowedSweeps', () => {
  it('folds a row opened while its sweep ran, once the sweep has ended', async () => {
    const ended: string[] = [];
    const followed = new FollowedSweeps(client([job({ id: 'r1' })]), s =>
      ended.push(s.id)
    );
    const running = sweep({ id: 's1', state: 'running' });
    await followed.update(page(running), true);
    followed.setExpanded('s1', true);
    await followed.update(page(running), false);
    expect(followed.isExpanded('s1')).toBe(true);
    expect(followed.runsOf('s1')).toHaveLength(1);

    await followed.update(page({ ...running, state: 'succeeded' }), false);
    expect(ended).toEqual(['s1']);
    expect(followed.isExpanded('s1')).toBe(false);
    expect(followed.runsOf('s1')).toBeNull();
  });

  it('keeps open a finished sweep opened after it ended', async () => {
    const followed = new FollowedSweeps(
      client([job({ id: 'r1' })]),
      () => undefined
    );
    const done = sweep({ id: 's2', state: 'succeeded' });
    await followed.update(page(done), true);
    followed.setExpanded('s2', true);
    await followed.update(page(done), false);
    await followed.update(page(done), false);
    expect(followed.isExpanded('s2')).toBe(true);
    expect(followed.runsOf('s2')).toHaveLength(1);
  });

  it("leaves the Jobs view's open rows as they are when the sweep ends", async () => {
    const followed = new FollowedSweeps(
      client([job({ id: 'r1' })]),
      () => undefined
    );
    const running = sweep({ id: 's3', state: 'running' });
    await followed.update(page(running), true);
    followed.setExpanded('s3', true, 'view');
    followed.setExpanded('s3', true, 'sidebar');
    await followed.update(page({ ...running, state: 'failed' }), false);
    expect(followed.isExpanded('s3', 'sidebar')).toBe(false);
    expect(followed.isExpanded('s3', 'view')).toBe(true);
    expect(followed.runsOf('s3')).toHaveLength(1);
  });
});
