/**
 * The container's memory and CPU against their limits (cgroup v2, v1, or the
 * machine's total when no limit is set).
 */
import React from 'react';

import { UsageBar } from '../components/figures/usagebar';
import { describeSource, formatCores, formatUsage } from '../components/format';
import { IHostResources } from '../api/types';

export function HostMemory(props: { host: IHostResources }): JSX.Element {
  const { memory, source } = props.host;
  return (
    <UsageBar
      label="Memory"
      used={memory.used_bytes}
      total={memory.limit_bytes}
      value={formatUsage(memory.used_bytes, memory.limit_bytes)}
      note={describeSource(source, memory.limited)}
      className="jp-GpuEnv-memoryBar"
      testId="gpu-env-memory-bar"
      data={{
        used: memory.used_bytes,
        limit: memory.limit_bytes,
        source
      }}
    />
  );
}

export function HostCpu(props: { host: IHostResources }): JSX.Element {
  const { cpu } = props.host;
  const usage = cpu.usage_cores;
  const limit = `${formatCores(cpu.limit_cores)} core${cpu.limit_cores === 1 ? '' : 's'}`;
  const note = cpu.limited
    ? 'container CPU limit'
    : 'no container limit — machine CPUs';
  return (
    <UsageBar
      label="CPU"
      used={usage ?? 0}
      total={cpu.limit_cores}
      value={
        usage === null ? `— of ${limit}` : `${formatCores(usage)} of ${limit}`
      }
      note={usage === null ? `${note} · measuring…` : note}
      className="jp-GpuEnv-cpuBar"
      testId="gpu-env-cpu-bar"
      data={{ used: usage ?? '', limit: cpu.limit_cores }}
      pending={usage === null}
    />
  );
}
