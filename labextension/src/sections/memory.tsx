/**
 * The "GPU & memory" section: the container's memory and CPU against their
 * limits, and the GPUs this server can see; refreshed by a GpuMonitor.
 */
import { ReactWidget, UseSignal } from '@jupyterlab/ui-components';
import { Message } from '@lumino/messaging';
import React from 'react';

import { UsageBar } from '../components/usagebar';
import { describeSource, formatCores, formatUsage } from '../format';
import { GpuMonitor } from '../monitor';
import { IGpuSnapshot, IHostResources } from '../types';
import { GpuList } from './gpus';

function HostMemory(props: { host: IHostResources }): JSX.Element {
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

function HostCpu(props: { host: IHostResources }): JSX.Element {
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

function Status(props: { monitor: GpuMonitor }): JSX.Element | null {
  const { error, updatedAt } = props.monitor;
  if (error) {
    return (
      <div className="jp-GpuEnv-error" role="alert" data-testid="gpu-env-error">
        Could not refresh: {error.message}
      </div>
    );
  }
  if (!updatedAt) {
    return null;
  }
  return (
    <div className="jp-GpuEnv-updated">
      Updated {updatedAt.toLocaleTimeString()}
    </div>
  );
}

function Snapshot(props: { snapshot: IGpuSnapshot }): JSX.Element {
  const { snapshot } = props;
  return (
    <>
      <div className="jp-GpuEnv-group" data-testid="gpu-env-host">
        <HostMemory host={snapshot.host} />
        <HostCpu host={snapshot.host} />
      </div>
      <div className="jp-GpuEnv-group" data-testid="gpu-env-gpus">
        <h3 className="jp-GpuEnv-groupTitle">GPU</h3>
        <GpuList gpus={snapshot.gpus} status={snapshot.gpu_status} />
      </div>
    </>
  );
}

export function MemoryView(props: { monitor: GpuMonitor }): JSX.Element {
  const { snapshot } = props.monitor;
  return (
    <div className="jp-GpuEnv-sectionBody" data-testid="gpu-env-memory">
      {snapshot ? (
        <Snapshot snapshot={snapshot} />
      ) : (
        !props.monitor.error && (
          <div className="jp-GpuEnv-loading">Reading memory and GPUs…</div>
        )
      )}
      <Status monitor={props.monitor} />
    </div>
  );
}

/**
 * The section widget; re-renders on every answer of the monitor.
 */
export class MemorySection extends ReactWidget {
  constructor(private readonly _monitor: GpuMonitor) {
    super();
    this.addClass('jp-GpuEnv-section');
    this.addClass('jp-GpuEnv-memorySection');
    this.title.label = 'GPU & memory';
    this.node.dataset.testid = 'gpu-env-section-memory';
  }

  /**
   * Catch up at once when shown (sidebar opened, section expanded): the
   * monitor stands by while the section is not visible.
   */
  protected override onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    void this._monitor.refresh();
  }

  protected render(): JSX.Element {
    return (
      <UseSignal signal={this._monitor.changed}>
        {() => <MemoryView monitor={this._monitor} />}
      </UseSignal>
    );
  }
}
