/**
 * "Run after…": the `POST pipelines` request and its ids.
 */
import type { IJob } from '../../src/api/types';
import {
  nodeIdOf,
  notebookStem,
  runAfterChoices,
  runAfterRequest
} from '../../src/pipelines/run-after';

const ID = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;

describe('nodeIdOf', () => {
  it('makes valid node ids of any name', () => {
    for (const text of [
      'train',
      'my notebook (v2)',
      '2024-report',
      '-x',
      'é',
      'a'.repeat(100),
      'prepare [alpha=1]'
    ]) {
      expect(nodeIdOf(text)).toMatch(ID);
    }
    expect(nodeIdOf('my notebook (v2)')).toBe('my_notebook_v2_');
    expect(nodeIdOf('2024-report')).toBe('_2024-report');
    expect(nodeIdOf('é')).toBe('node');
    expect(nodeIdOf('', 'job')).toBe('job');
  });
});

describe('runAfterRequest', () => {
  const job = { id: 'abcdef012345', name: 'train model' } as IJob;

  it('runs the notebook after the job, as the job key', () => {
    const request = runAfterRequest(
      {
        notebook_path: 'work/report.ipynb',
        backend: 'local',
        parameters: { alpha: 1 },
        kernel: 'python3'
      },
      job
    );
    expect(request).toEqual({
      name: 'report',
      after_jobs: { train_model: 'abcdef012345' },
      nodes: [
        {
          id: 'report',
          after: ['train_model'],
          notebook_path: 'work/report.ipynb',
          backend: 'local',
          parameters: { alpha: 1 },
          kernel: 'python3'
        }
      ]
    });
  });

  it('keeps the key apart from the node id', () => {
    const request = runAfterRequest(
      { notebook_path: 'train.ipynb', backend: 'local' },
      { id: 'abcdef012345', name: 'train' }
    );
    const [key] = Object.keys(request.after_jobs ?? {});
    expect(key).toMatch(ID);
    expect(key).not.toBe(request.nodes[0].id);
    expect(request.nodes[0].after).toEqual([key]);
  });

  it('takes the name the user typed for the run', () => {
    const request = runAfterRequest(
      { notebook_path: 'work/report.ipynb', backend: 'local', name: 'weekly' },
      job
    );
    expect(request.name).toBe('weekly');
  });

  it('names the stem of a notebook', () => {
    expect(notebookStem('a/b/Report.IPYNB')).toBe('Report');
  });
});

describe('runAfterChoices', () => {
  it('offers queued and running jobs, newest first', () => {
    const jobs = [
      { id: 'a', state: 'running', created_at: 1 },
      { id: 'b', state: 'succeeded', created_at: 3 },
      { id: 'c', state: 'queued', created_at: 2 }
    ] as IJob[];
    expect(runAfterChoices(jobs).map(j => j.id)).toEqual(['c', 'a']);
  });

  it('does not offer the nodes of a pipeline', () => {
    const jobs = [
      { id: 'a', state: 'running', created_at: 1, pipeline_id: 'p1' },
      { id: 'b', state: 'running', created_at: 2, pipeline_id: null }
    ] as IJob[];
    expect(runAfterChoices(jobs).map(j => j.id)).toEqual(['b']);
  });
});
