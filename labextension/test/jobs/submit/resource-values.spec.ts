/**
 * The resource fields' rules: what is sent from what was typed, and how a
 * backend's free capacity reads on the MIG options.
 */
import { readFileSync } from 'fs';
import { join } from 'path';

import type { ICapacityRow } from '../../../src/api/types';
import {
  describeCapacity,
  freeByProfile,
  MAX_TEXT,
  MEMORY_PATTERN,
  TIME_LIMIT_PATTERN,
  WHOLE_NUMBERS,
  profileLabel,
  readResources,
  resourceProblem
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

describe('resourceProblem', () => {
  it("refuses what the server would, in the server's words", () => {
    expect(resourceProblem('cpus', 'abc')).toBe(
      'CPUs must be a whole number from 1 to 1024'
    );
    expect(resourceProblem('cpus', '1.5')).toBe(
      'CPUs must be a whole number from 1 to 1024'
    );
    expect(resourceProblem('cpus', '2000')).toBe(
      'CPUs must be a whole number from 1 to 1024'
    );
    expect(resourceProblem('gpus', '-1')).toBe(
      'GPUs must be a whole number from 0 to 64'
    );
    expect(resourceProblem('memory', '5 potatoes')).toBe(
      "memory '5 potatoes' is not valid; write it like '512M', '4G' or " +
        "'1.5T' (binary units)"
    );
    expect(resourceProblem('memory', '4096')).toMatch(/^memory '4096' is not/);
    expect(resourceProblem('time_limit', 'soon')).toBe(
      "time limit 'soon' is not valid; write minutes ('90'), 'HH:MM:SS' " +
        "('1:30:00') or 'D-HH:MM:SS' ('2-00:00:00')"
    );
    expect(resourceProblem('time_limit', '1:60:00')).toMatch(/is not valid/);
    expect(resourceProblem('memory', '1'.repeat(41) + 'G')).toBe(
      'memory is longer than 40 characters'
    );
    expect(resourceProblem('max_concurrent', '0')).toBe(
      'runs at once must be a whole number from 1 to 100000'
    );
  });

  it('accepts what the server reads, and an empty field', () => {
    for (const [key, text] of [
      ['cpus', '4'],
      ['gpus', '0'],
      ['memory', '4G'],
      ['memory', ' 1.5TiB '],
      ['time_limit', '90'],
      ['time_limit', '1:30:00'],
      ['time_limit', '2-00:00:00'],
      ['cpus', '   ']
    ] as const) {
      expect(resourceProblem(key, text)).toBeNull();
    }
  });

  it("holds the server's patterns and limits (docs/openapi.json)", () => {
    const doc = JSON.parse(
      readFileSync(join(__dirname, '../../../../docs/openapi.json'), 'utf8')
    );
    const props = doc.components.schemas.Resources.properties;
    const branch = (name: string, type: string) =>
      props[name].anyOf.find((s: { type: string }) => s.type === type);
    expect(MEMORY_PATTERN.source).toBe(branch('memory', 'string').pattern);
    expect(TIME_LIMIT_PATTERN.source).toBe(
      branch('time_limit', 'string').pattern
    );
    expect(branch('memory', 'string').maxLength).toBe(MAX_TEXT);
    for (const key of ['cpus', 'gpus'] as const) {
      expect(branch(key, 'integer').minimum).toBe(WHOLE_NUMBERS[key].low);
      expect(branch(key, 'integer').maximum).toBe(WHOLE_NUMBERS[key].high);
    }
    const request = doc.components.schemas.JobRequest.properties;
    const atOnce = request.max_concurrent.anyOf[0];
    expect(atOnce.maximum).toBe(WHOLE_NUMBERS.max_concurrent.high);
  });
});
