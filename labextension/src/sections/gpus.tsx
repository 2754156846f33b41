/**
 * The GPU part of the "GPU & memory" section: an honest empty state when no
 * GPU is visible, else one block per GPU (and per MIG slice).
 */
import React from 'react';

import { UsageBar } from '../components/usagebar';
import { formatUsage } from '../format';
import { gpuIcon } from '../icons';
import { IGpuDevice, IGpuStatus, IMigDevice } from '../types';

function MemoryOf(props: {
  label: string;
  used: number | null;
  total: number | null;
  note?: string;
}): JSX.Element {
  if (props.used === null || props.total === null || props.total <= 0) {
    return (
      <div className="jp-GpuEnv-usageNote">
        {props.label}: memory use not reported
      </div>
    );
  }
  return (
    <UsageBar
      label={props.label}
      used={props.used}
      total={props.total}
      value={formatUsage(props.used, props.total)}
      note={props.note}
      className="jp-GpuEnv-gpuMemoryBar"
      data={{ used: props.used, limit: props.total }}
    />
  );
}

function MigSlice(props: { mig: IMigDevice }): JSX.Element {
  const { mig } = props;
  const label = mig.profile ?? 'MIG slice';
  const where = ['MIG slice'];
  if (mig.gpu_instance_id !== null) {
    where.push(`GPU instance ${mig.gpu_instance_id}`);
  }
  if (!mig.visible) {
    where.push('not assigned to this server');
  }
  return (
    <li
      className="jp-GpuEnv-mig"
      data-visible={mig.visible}
      title={mig.uuid ?? undefined}
    >
      <MemoryOf
        label={label}
        used={mig.memory_used_bytes}
        total={mig.memory_total_bytes}
        note={where.join(' · ')}
      />
    </li>
  );
}

function GpuCard(props: { gpu: IGpuDevice }): JSX.Element {
  const { gpu } = props;
  const utilization =
    gpu.utilization_percent !== null
      ? `${Math.round(gpu.utilization_percent)} % busy`
      : null;
  const processes =
    gpu.processes.length > 0
      ? `${gpu.processes.length} process${gpu.processes.length > 1 ? 'es' : ''}`
      : null;
  const details = [utilization, processes].filter(Boolean).join(' · ');
  return (
    <li
      className="jp-GpuEnv-gpu"
      data-testid="gpu-env-gpu"
      data-visible={gpu.visible}
    >
      <div className="jp-GpuEnv-gpuTitle" title={gpu.uuid ?? undefined}>
        <gpuIcon.react tag="span" className="jp-GpuEnv-gpuIcon" />
        <span className="jp-GpuEnv-gpuName">
          GPU {gpu.index} · {gpu.name}
        </span>
      </div>
      {gpu.mig_enabled ? (
        <ul className="jp-GpuEnv-migList">
          {gpu.mig_devices.map((mig, i) => (
            <MigSlice key={mig.uuid ?? i} mig={mig} />
          ))}
        </ul>
      ) : (
        <MemoryOf
          label="Memory"
          used={gpu.memory_used_bytes}
          total={gpu.memory_total_bytes}
        />
      )}
      {details && <div className="jp-GpuEnv-usageNote">{details}</div>}
    </li>
  );
}

export function GpuList(props: {
  gpus: IGpuDevice[];
  status: IGpuStatus;
}): JSX.Element {
  if (props.gpus.length === 0) {
    return (
      <div
        className="jp-GpuEnv-empty jp-GpuEnv-gpuEmpty"
        data-testid="gpu-env-gpu-empty"
        data-reason={props.status.reason}
      >
        <gpuIcon.react tag="span" className="jp-GpuEnv-emptyIcon" />
        <p className="jp-GpuEnv-emptyText">{props.status.message}</p>
      </div>
    );
  }
  return (
    <>
      <ul className="jp-GpuEnv-gpuList" data-testid="gpu-env-gpu-list">
        {props.gpus.map(gpu => (
          <GpuCard key={gpu.uuid ?? gpu.index} gpu={gpu} />
        ))}
      </ul>
      {props.status.reason === 'recorded' && (
        <div className="jp-GpuEnv-usageNote">{props.status.message}</div>
      )}
    </>
  );
}
