/**
 * The pure logic behind the GPU section (no browser, no server, no
 * fixtures): the MIG slot layout and what this server holds.
 */
import { expect, test } from '@playwright/test';

import {
  heldDevices,
  heldMemory,
  heldSeries
} from '../../labextension/src/gpu/held/devices';
import {
  instanceProfile,
  migLayout,
  parseProfile
} from '../../labextension/src/gpu/devices/layout';
import type { IGpuDevice, IMigDevice } from '../../labextension/src/api/types';

const MIB = 1024 * 1024;

function mig(fields: Partial<IMigDevice>): IMigDevice {
  return {
    uuid: null,
    profile: null,
    gpu_instance_id: null,
    compute_instance_id: 0,
    memory_used_bytes: null,
    memory_total_bytes: null,
    sm_count: null,
    placement_start: null,
    placement_size: null,
    visible: false,
    processes: [],
    ...fields
  };
}

function gpu(fields: Partial<IGpuDevice>): IGpuDevice {
  return {
    index: 0,
    name: 'NVIDIA H100 80GB HBM3',
    uuid: 'GPU-0',
    memory_used_bytes: null,
    memory_total_bytes: 81559 * MIB,
    utilization_percent: null,
    mig_enabled: true,
    mig_devices: [],
    visible: true,
    processes: [],
    ...fields
  };
}

// The H100 capture's four GPU instances, without placements (as `-q` says).
const H100 = gpu({
  mig_devices: [
    mig({
      profile: '3g.40gb',
      gpu_instance_id: 2,
      memory_total_bytes: 40448 * MIB
    }),
    mig({
      profile: '2g.20gb',
      gpu_instance_id: 3,
      memory_total_bytes: 20096 * MIB
    }),
    mig({
      uuid: 'MIG-2',
      profile: '1g.10gb',
      gpu_instance_id: 9,
      memory_used_bytes: 9 * MIB,
      memory_total_bytes: 9984 * MIB,
      visible: true
    }),
    mig({
      profile: '1g.10gb',
      gpu_instance_id: 10,
      memory_total_bytes: 9984 * MIB
    })
  ]
});

test.describe('MIG layout', () => {
  test('profiles: GPU instance, compute instance and memory parts', () => {
    expect(parseProfile('1g.10gb')).toEqual({
      ci: null,
      gi: 1,
      memory: '10gb'
    });
    expect(parseProfile('1c.3g.71gb')).toEqual({
      ci: 1,
      gi: 3,
      memory: '71gb'
    });
    expect(parseProfile('1g.10gb+me')?.memory).toBe('10gb+me');
    expect(parseProfile('MIG slice')).toBeNull();
    expect(instanceProfile('2c.3g.71gb')).toBe('3g.71gb');
    expect(instanceProfile('7g.80gb')).toBe('7g.80gb');
  });

  test('without placements: drawn in order, sized by memory', () => {
    const layout = migLayout(H100);
    expect(layout.slots).toBe(8);
    expect(layout.ordered).toBe(true);
    expect(layout.empty).toEqual([]);
    expect(
      layout.blocks.map(b => [b.profile, b.gi, b.start, b.size, b.visible])
    ).toEqual([
      ['3g.40gb', 2, 0, 4, false],
      ['2g.20gb', 3, 4, 2, false],
      ['1g.10gb', 9, 6, 1, true],
      ['1g.10gb', 10, 7, 1, false]
    ]);
  });

  test('with placements: where the driver said, gaps left empty', () => {
    const layout = migLayout(
      gpu({
        name: 'NVIDIA A100-SXM4-40GB',
        mig_devices: [
          mig({
            profile: '1g.5gb',
            gpu_instance_id: 8,
            placement_start: 1,
            placement_size: 1
          }),
          mig({
            profile: '3g.20gb',
            gpu_instance_id: 2,
            placement_start: 4,
            placement_size: 4
          }),
          mig({
            profile: '1g.5gb',
            gpu_instance_id: 7,
            placement_start: 0,
            placement_size: 1
          })
        ]
      })
    );
    expect(layout.ordered).toBe(false);
    expect(layout.blocks.map(b => [b.gi, b.start, b.size, b.placed])).toEqual([
      [7, 0, 1, true],
      [8, 1, 1, true],
      [2, 4, 4, true]
    ]);
    expect(layout.empty).toEqual([2, 3]);
  });

  test('compute instances sharing a GPU instance are one block', () => {
    const layout = migLayout(
      gpu({
        name: 'NVIDIA H200',
        memory_total_bytes: 143771 * MIB,
        mig_devices: [
          mig({
            profile: '1c.3g.71gb',
            gpu_instance_id: 2,
            compute_instance_id: 0,
            memory_total_bytes: 71424 * MIB,
            visible: true
          }),
          mig({
            profile: '2c.3g.71gb',
            gpu_instance_id: 2,
            compute_instance_id: 1,
            memory_total_bytes: 71424 * MIB
          }),
          mig({
            profile: '2g.35gb',
            gpu_instance_id: 3,
            memory_total_bytes: 33280 * MIB
          }),
          mig({
            profile: '1g.18gb',
            gpu_instance_id: 9,
            memory_total_bytes: 16384 * MIB
          }),
          mig({
            profile: '1g.18gb',
            gpu_instance_id: 10,
            memory_total_bytes: 16384 * MIB
          })
        ]
      })
    );
    expect(layout.blocks).toHaveLength(4);
    const shared = layout.blocks[0];
    expect([shared.profile, shared.start, shared.size]).toEqual([
      '3g.71gb',
      0,
      4
    ]);
    expect(shared.computes.map(c => [c.label, c.size, c.mig.visible])).toEqual([
      ['1c', 1, true],
      ['2c', 2, false]
    ]);
    expect(layout.blocks.map(b => b.size)).toEqual([4, 2, 1, 1]);
  });

  test('an A30 has 4 memory slices; sizes fall back to the profile', () => {
    const layout = migLayout(
      gpu({
        name: 'NVIDIA A30',
        memory_total_bytes: null,
        mig_devices: [mig({ profile: '2g.12gb', gpu_instance_id: 1 })]
      })
    );
    expect(layout.slots).toBe(4);
    expect(layout.blocks[0].size).toBe(2);
    expect(layout.empty).toEqual([2, 3]);
  });
});

test.describe('held devices', () => {
  test('the visible MIG slices of MIG GPUs, and visible whole GPUs', () => {
    const whole = gpu({
      index: 1,
      uuid: 'GPU-1',
      mig_enabled: false,
      memory_used_bytes: 20 * MIB,
      memory_total_bytes: 80 * MIB
    });
    const hidden = gpu({ index: 2, mig_enabled: false, visible: false });
    const held = heldDevices([H100, whole, hidden]);
    expect(held.map(d => d.kind)).toEqual(['mig', 'gpu']);
    expect(heldMemory(held)).toEqual({
      used: 29 * MIB,
      total: (9984 + 80) * MIB
    });
  });

  test('compute instances of one GPU instance count its memory once', () => {
    const shared = gpu({
      mig_devices: [
        mig({
          uuid: 'MIG-a',
          gpu_instance_id: 2,
          compute_instance_id: 0,
          memory_used_bytes: 5 * MIB,
          memory_total_bytes: 70 * MIB,
          visible: true
        }),
        mig({
          uuid: 'MIG-b',
          gpu_instance_id: 2,
          compute_instance_id: 1,
          memory_used_bytes: 5 * MIB,
          memory_total_bytes: 70 * MIB,
          visible: true
        })
      ]
    });
    const held = heldDevices([shared]);
    expect(held).toHaveLength(2);
    expect(heldMemory(held)).toEqual({ used: 5 * MIB, total: 70 * MIB });
    const points = [
      {
        t: 1,
        host_memory_used_bytes: 1,
        host_memory_limit_bytes: 2,
        devices: { 'MIG-a': { memory_used_bytes: 3 } }
      },
      {
        t: 2,
        host_memory_used_bytes: 1,
        host_memory_limit_bytes: 2,
        devices: {}
      },
      {
        t: 3,
        host_memory_used_bytes: 1,
        host_memory_limit_bytes: 2,
        devices: { 'MIG-a': { memory_used_bytes: 4 } }
      }
    ];
    // A sample missing the device is left out, not drawn as zero.
    expect(heldSeries(points, held)).toEqual([
      { t: 1, value: 3 },
      { t: 3, value: 4 }
    ]);
  });
});
