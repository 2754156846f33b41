/**
 * The resource fields' rules: what is sent from what was typed, and how a
 * backend's free capacity reads on the MIG options.
 */
import type { ICapacityRow } from '../../../src/api/types';
import {
  describeCapacity,
  freeByProfile,
  profileLabel,
  readResources
} from '../../../src/jobs/submit/resource-values';

const EMPTY = {
  cpus: '',
  memory: '',
  gpus: '',
  time_limit: '',
  mig_profile: ''
};
const ALL = { gpus: true, mig: true };

function row(overrides: Partial<ICapacityRow>): ICapacityRow {
  return {
    resource: 'nvidia.com/gpu',
    gpu_model: '',
    profile: null,
    nodes: 1,
    free: 0,
    used: 0,
    total: 0,
    ...overrides
  };
}

describe('readResources', () => {
  it('leaves empty fields to the backend', () => {
    expect(readResources(EMPTY, ALL)).toEqual({});
    expect(readResources({ ...EMPTY, cpus: '  ', memory: ' ' }, ALL)).toEqual(
      {}
    );
  });

  it('sends numbers as numbers and the rest trimmed', () => {
    expect(
      readResources(
        {
          cpus: ' 4 ',
          memory: ' 8G ',
          gpus: '2',
          time_limit: ' 1:00:00',
          mig_profile: ''
        },
        ALL
      )
    ).toEqual({ cpus: 4, memory: '8G', gpus: 2, time_limit: '1:00:00' });
  });

  it('asks whole GPUs or a MIG slice, never both', () => {
    expect(
      readResources({ ...EMPTY, gpus: '1', mig_profile: '1g.10gb' }, ALL)
    ).toEqual({ mig_profile: '1g.10gb' });
  });

  it('asks only what the backend offers', () => {
    const none = { gpus: false, mig: false };
    expect(readResources({ ...EMPTY, gpus: '1', cpus: '2' }, none)).toEqual({
      cpus: 2
    });
    expect(readResources({ ...EMPTY, mig_profile: '1g.10gb' }, none)).toEqual(
      {}
    );
  });
});

describe('capacity', () => {
  it('names the profile, else the model, else GPUs', () => {
    expect(
      describeCapacity(row({ profile: '1g.10gb', free: 3, total: 7 }))
    ).toBe('1g.10gb: 3 free of 7');
    expect(
      describeCapacity(row({ gpu_model: 'NVIDIA-H100', free: 2, total: 8 }))
    ).toBe('NVIDIA-H100: 2 free of 8');
    expect(describeCapacity(row({ free: 0, total: 8 }))).toBe(
      'GPUs: 0 free of 8'
    );
  });

  it('sums free slices per profile over the nodes, whole GPUs apart', () => {
    const free = freeByProfile([
      row({ profile: '1g.10gb', free: 2 }),
      row({ profile: '1g.10gb', free: 1 }),
      row({ profile: '3g.40gb', free: 0 }),
      row({ gpu_model: 'NVIDIA-H100', free: 4 })
    ]);
    expect([...free]).toEqual([
      ['1g.10gb', 3],
      ['3g.40gb', 0]
    ]);
  });

  it('labels an option with what is free, and says when none is', () => {
    expect(profileLabel('1g.10gb', undefined)).toBe('1g.10gb');
    expect(profileLabel('1g.10gb', 3)).toBe('1g.10gb (3 free)');
    expect(profileLabel('1g.10gb', 0)).toBe('1g.10gb (none free: queues)');
  });
});
