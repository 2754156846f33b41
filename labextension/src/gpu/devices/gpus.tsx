/**
 * The GPU part of the "GPU & memory" section: an honest empty state when no
 * GPU is visible, and one block per GPU of the machine: its memory, or for
 * MIG its slot diagram and one bar per MIG slice.
 */
import React from 'react';

import { UsageBar } from '../../components/figures/usagebar';
import { formatUsage } from '../../components/format';
import { gpuIcon } from '../../components/icons';
import { MigDiagram } from './slotdiagram';
import { IGpuDevice, IGpuStatus, IMigDevice } from '../../api/types';

function MemoryOf(props: {
  label: string;
  used: number | null;
  total: number | null;
  note?: string;
}): JSX.Element {
  if (props.used === null || props.total === null || props.total <= 0) {
    return (
      <div className="jp-GpuEnv-note">
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
  const label =
    (mig.profile ?? 'MIG slice') + (mig.profile_inferred ? ' (inferred)' : '');
  const where = ['MIG slice'];
  if (mig.gpu_instance_id !== null) {
    where.push(`GPU instance ${mig.gpu_instance_id}`);
  }
  if (mig.compute_instance_id !== null && mig.compute_instance_id > 0) {
    where.push(`compute instance ${mig.compute_instance_id}`);
  }
  if (mig.processes.length > 0) {
    const n = mig.processes.length;
    where.push(`${n} process${n > 1 ? 'es' : ''}`);
  }
  where.push(mig.visible ? 'yours' : 'not assigned to this server');
  return (
    <li
      className="jp-GpuEnv-mig"
      data-testid="gpu-env-mig"
      data-visible={mig.visible}
      data-profile={mig.profile ?? ''}
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
        <gpuIcon.react tag="span" className="jp-GpuEnv-icon" />
        <span>
          GPU {gpu.index} · {gpu.name}
        </span>
      </div>
      {gpu.mig_enabled ? (
        <>
          {gpu.mig_devices.length > 0 && <MigDiagram gpu={gpu} />}
          <ul className="jp-GpuEnv-list jp-GpuEnv-migList">
            {gpu.mig_devices.map((mig, i) => (
              <MigSlice key={mig.uuid ?? i} mig={mig} />
            ))}
          </ul>
        </>
      ) : (
        <MemoryOf
          label="Memory"
          used={gpu.memory_used_bytes}
          total={gpu.memory_total_bytes}
        />
      )}
      {details && <div className="jp-GpuEnv-note">{details}</div>}
    </li>
  );
}

/** Why no GPU is visible, in the server's words. */
export function NoGpuVisible(props: { status: IGpuStatus }): JSX.Element {
  return (
    <div
      className="jp-GpuEnv-empty jp-GpuEnv-gpuEmpty"
      data-testid="gpu-env-gpu-empty"
      data-reason={props.status.reason}
    >
      <gpuIcon.react tag="span" className="jp-GpuEnv-icon" />
      <p>{props.status.message}</p>
    </div>
  );
}

export function GpuList(props: {
  gpus: IGpuDevice[];
  status: IGpuStatus;
  /** Whether to repeat a recorded reading's note (unless shown above). */
  statusNote?: boolean;
}): JSX.Element {
  if (props.gpus.length === 0) {
    return <NoGpuVisible status={props.status} />;
  }
  return (
    <>
      <ul
        className="jp-GpuEnv-list jp-GpuEnv-gpuList"
        data-testid="gpu-env-gpu-list"
      >
        {props.gpus.map(gpu => (
          <GpuCard key={gpu.uuid ?? gpu.index} gpu={gpu} />
        ))}
      </ul>
      {props.status.reason === 'recorded' && props.statusNote !== false && (
        <div className="jp-GpuEnv-note">{props.status.message}</div>
      )}
    </>
  );
}
