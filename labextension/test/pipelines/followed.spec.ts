/**
 * FollowedPipelines announces a pipeline's end once, and only for one it saw
 * queued or running: a page's answer stands in for the server's.
 */
import { ServerConnection } from '@jupyterlab/services';

import type { IPipeline } from '../../src/api/types';
import { FollowedPipelines } from '../../src/pipelines/followed';

const pipeline = (id: string, state: IPipeline['state']): IPipeline =>
  ({
    id,
    name: id,
    state,
    counts: {},
    nodes: [],
    created_at: 0
  }) as unknown as IPipeline;

function followed(pages: IPipeline[][]): FollowedPipelines {
  const f = new FollowedPipelines(ServerConnection.makeSettings());
  f.client.list = async () => {
    const items = pages.shift() ?? [];
    return {
      items,
      total: items.length,
      offset: 0,
      limit: 50,
      next_offset: null
    };
  };
  return f;
}

describe('FollowedPipelines.ended', () => {
  it('announces once a pipeline seen running has ended', async () => {
    const f = followed([
      [pipeline('a', 'running'), pipeline('old', 'failed')],
      [pipeline('a', 'succeeded'), pipeline('old', 'failed')],
      [pipeline('a', 'succeeded')]
    ]);
    const ended: string[] = [];
    f.ended.connect((_, p) => ended.push(`${p.id} ${p.state}`));
    await f.update(50);
    await f.update(50);
    await f.update(50);
    expect(ended).toEqual(['a succeeded']);
  });

  it('follows one just sent, and says nothing of a cancel made here', async () => {
    const f = followed([
      [pipeline('b', 'failed')],
      [pipeline('c', 'cancelled')]
    ]);
    const ended: string[] = [];
    f.ended.connect((_, p) => ended.push(p.id));
    f.add(pipeline('b', 'queued'));
    f.add(pipeline('c', 'running'));
    f.set(pipeline('c', 'cancelled'));
    await f.update(50);
    await f.update(50);
    expect(ended).toEqual(['b']);
  });
});
