/**
 * "Run again…": the dialog's fields filled from a job, and the rerun
 * request made from what it holds.
 */
import type {
  IJob,
  INotebookParameter,
  INotebookParameters
} from '../../../src/api/types';
import {
  rerunName,
  rerunRequest,
  resourceTexts,
  runDefaults,
  targetOf
} from '../../../src/jobs/submit/rerun-values';

function param(
  name: string,
  kind: INotebookParameter['kind'],
  value: unknown,
  text: string
): INotebookParameter {
  return {
    name,
    kind,
    default: value,
    default_text: text,
    annotation: null,
    help: ''
  };
}

const cell: INotebookParameters = {
  cell_index: 0,
  inspectable: true,
  kernel: 'python3',
  language: 'python',
  source: '',
  parameters: [
    param('alpha', 'int', 1, '1'),
    param('label', 'str', 'x', "'x'"),
    param('flag', 'bool', false, 'False'),
    param('steps', 'int', 3, '3')
  ]
};

describe('runDefaults', () => {
  it('starts each field at the value the run had', () => {
    const filled = runDefaults(cell, { alpha: 5, label: 'run a', flag: true });
    expect(filled.parameters.map(p => [p.name, p.default])).toEqual([
      ['alpha', 5],
      ['label', 'run a'],
      ['flag', true],
      ['steps', 3]
    ]);
    expect(filled.parameters[0].default_text).toBe('5');
    expect(filled.parameters[1].default_text).toBe('run a');
    // a parameter the run did not set keeps the cell's default
    expect(filled.parameters[3]).toBe(cell.parameters[3]);
  });

  it('gives a field that can show the value the run had', () => {
    const filled = runDefaults(cell, { alpha: 0.5, label: [1, 2], flag: null });
    expect(filled.parameters.map(p => [p.kind, p.default_text])).toEqual([
      ['float', '0.5'],
      ['literal', '[1,2]'],
      ['literal', 'None'],
      ['int', '3']
    ]);
  });
});

describe('resourceTexts', () => {
  it('writes the resources as people type them', () => {
    expect(
      resourceTexts({
        cpus: 2,
        memory_bytes: 4 * 1024 ** 3,
        gpus: 1,
        mig_profile: null,
        time_limit_seconds: 5400
      })
    ).toEqual({ cpus: 2, memory: '4G', gpus: 1, time_limit: '1:30:00' });
    expect(
      resourceTexts({
        cpus: null,
        memory_bytes: 512 * 1024 ** 2,
        gpus: null,
        mig_profile: '1g.10gb',
        time_limit_seconds: 600
      })
    ).toEqual({ memory: '512M', mig_profile: '1g.10gb', time_limit: 10 });
    expect(
      resourceTexts({
        cpus: null,
        memory_bytes: 1000,
        gpus: null,
        mig_profile: null,
        time_limit_seconds: null
      })
    ).toEqual({ memory: 1000 });
  });
});

describe('targetOf and rerunRequest', () => {
  it('starts at the runtime the job ran in', () => {
    const job = { kernel: 'python3', environment: null, image: null } as IJob;
    expect(targetOf(job)).toBe('kernel:python3');
    expect(targetOf({ ...job, environment: 'torch' })).toBe(
      'environment:torch'
    );
    expect(targetOf({ ...job, kernel: null })).toBeNull();
  });

  it('sends the changed values and the rest as shown, a cleared field cleared', () => {
    expect(
      rerunRequest({
        notebook_path: 'a.ipynb',
        backend: 'local',
        parameters: { alpha: 7 },
        resources: { cpus: 2 },
        kernel: 'python3'
      })
    ).toEqual({
      parameters: { alpha: 7 },
      backend: 'local',
      queue: null,
      resources: { cpus: 2 },
      kernel: 'python3',
      priority: 'normal'
    });
    expect(
      rerunRequest({
        notebook_path: 'a.ipynb',
        backend: 'slurm',
        queue: 'gpu'
      })
    ).toEqual({
      parameters: {},
      backend: 'slurm',
      queue: 'gpu',
      resources: {},
      priority: 'normal'
    });
  });

  it('keeps the priority chosen (the job’s, unless changed)', () => {
    expect(
      rerunRequest({
        notebook_path: 'a.ipynb',
        backend: 'slurm',
        priority: 'opportunistic'
      }).priority
    ).toBe('opportunistic');
  });
});

describe('rerunName', () => {
  it('is the old name with what changed', () => {
    expect(rerunName('walk', { alpha: 7 })).toBe('walk alpha=7');
    expect(rerunName('walk', { alpha: 7, label: 'b' })).toBe(
      'walk alpha=7 label=b'
    );
  });

  it('replaces a value the old name already says', () => {
    expect(rerunName('walk alpha=3 beta=1', { alpha: 7 })).toBe(
      'walk alpha=7 beta=1'
    );
  });

  it('keeps the old name when nothing changed, within 200 characters', () => {
    expect(rerunName('walk', {})).toBe('walk');
    expect(rerunName('w'.repeat(199), { alpha: 7 })).toHaveLength(200);
  });

  it('is sent as the new job’s name', () => {
    expect(
      rerunRequest({
        notebook_path: 'a.ipynb',
        backend: 'local',
        name: 'walk alpha=7'
      }).name
    ).toBe('walk alpha=7');
  });
});
