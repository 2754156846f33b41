/**
 * "My slice first": what this server holds, at the top of the section. For a
 * MIG slice its profile, UUID, GPU and compute instance and memory; for a
 * whole GPU its name, memory and utilization.
 */
import { Clipboard } from '@jupyterlab/apputils';
import {
  ToolbarButtonComponent,
  checkIcon,
  copyIcon
} from '@jupyterlab/ui-components';
import React, { useEffect, useState } from 'react';

import { UsageBar } from '../../components/figures/usagebar';
import { formatUsage } from '../../components/format';
import { gpuIcon } from '../../components/icons';
import { HeldDevice } from './devices';

/** The UUID, shortened by CSS, with a button that copies it whole. */
export function CopyableUuid(props: { uuid: string }): JSX.Element {
  const [copied, setCopied] = useState(false);
  useEffect(() => {
    if (!copied) {
      return;
    }
    const timer = window.setTimeout(() => setCopied(false), 1500);
    return () => window.clearTimeout(timer);
  }, [copied]);
  return (
    <div className="jp-GpuEnv-uuid">
      <code title={props.uuid} data-testid="gpu-env-held-uuid">
        {props.uuid}
      </code>
      <ToolbarButtonComponent
        icon={copied ? checkIcon : copyIcon}
        tooltip={copied ? 'Copied' : 'Copy the UUID'}
        onClick={() => {
          Clipboard.copyToSystem(props.uuid);
          setCopied(true);
        }}
      />
    </div>
  );
}

function HeldMemory(props: {
  used: number | null;
  total: number | null;
  note?: string;
}): JSX.Element {
  const { used, total } = props;
  if (used === null || total === null || total <= 0) {
    return <div className="jp-GpuEnv-note">Memory use not reported</div>;
  }
  return (
    <UsageBar
      label="Memory"
      used={used}
      total={total}
      value={formatUsage(used, total)}
      note={props.note}
      className="jp-GpuEnv-heldMemoryBar"
      testId="gpu-env-held-memory"
      data={{ used, limit: total }}
    />
  );
}

function MigCard(props: {
  device: Extract<HeldDevice, { kind: 'mig' }>;
}): JSX.Element {
  const { gpu, mig } = props.device;
  const ids = [
    mig.gpu_instance_id !== null ? `GI ${mig.gpu_instance_id}` : null,
    mig.compute_instance_id !== null ? `CI ${mig.compute_instance_id}` : null,
    mig.sm_count !== null ? `${mig.sm_count} SMs` : null
  ].filter(Boolean);
  const sharing = gpu.mig_devices.filter(
    m =>
      mig.gpu_instance_id !== null && m.gpu_instance_id === mig.gpu_instance_id
  ).length;
  const note =
    sharing > 1
      ? `shared by the ${sharing} compute instances of GPU instance ${mig.gpu_instance_id}`
      : undefined;
  return (
    <>
      <div className="jp-GpuEnv-heldTitle">
        <gpuIcon.react tag="span" className="jp-GpuEnv-icon" />
        <span className="jp-GpuEnv-heldName" data-testid="gpu-env-held-profile">
          {mig.profile ?? 'MIG slice'}
        </span>
        {mig.profile_inferred && (
          <span
            className="jp-GpuEnv-note"
            title="No tool printed the profile: derived from SM count and memory"
          >
            (inferred)
          </span>
        )}
        <span className="jp-GpuEnv-badge">MIG slice</span>
      </div>
      <div className="jp-GpuEnv-heldMeta jp-GpuEnv-note">
        <span>
          GPU {gpu.index} · {gpu.name}
        </span>
        {ids.length > 0 && (
          <span data-testid="gpu-env-held-ids">{ids.join(' · ')}</span>
        )}
      </div>
      {mig.uuid && <CopyableUuid uuid={mig.uuid} />}
      <HeldMemory
        used={mig.memory_used_bytes}
        total={mig.memory_total_bytes}
        note={note}
      />
    </>
  );
}

function GpuCard(props: {
  device: Extract<HeldDevice, { kind: 'gpu' }>;
}): JSX.Element {
  const { gpu } = props.device;
  const busy = gpu.utilization_percent;
  return (
    <>
      <div className="jp-GpuEnv-heldTitle">
        <gpuIcon.react tag="span" className="jp-GpuEnv-icon" />
        <span className="jp-GpuEnv-heldName" data-testid="gpu-env-held-profile">
          {gpu.name}
        </span>
        <span className="jp-GpuEnv-badge">GPU {gpu.index}</span>
      </div>
      {gpu.uuid && <CopyableUuid uuid={gpu.uuid} />}
      <HeldMemory used={gpu.memory_used_bytes} total={gpu.memory_total_bytes} />
      {busy !== null ? (
        <UsageBar
          label="Utilization"
          used={busy}
          total={100}
          value=""
          className="jp-GpuEnv-utilizationBar"
          testId="gpu-env-held-utilization"
          data={{ percent: busy }}
        />
      ) : (
        <div className="jp-GpuEnv-note">Utilization not reported</div>
      )}
    </>
  );
}

/** One card per held device; `note` (e.g. about idle detection) below. */
export function HeldDevices(props: {
  held: HeldDevice[];
  note?: string;
}): JSX.Element {
  const { held } = props;
  const slices = held.every(d => d.kind === 'mig');
  const noun = slices ? 'MIG slice' : 'GPU';
  const title =
    held.length > 1 ? `Your ${noun}s (${held.length})` : `Your ${noun}`;
  return (
    <div className="jp-GpuEnv-group" data-testid="gpu-env-held">
      <h3 className="jp-GpuEnv-groupTitle">{title}</h3>
      {held.map(device => (
        <div
          key={
            device.kind === 'mig'
              ? (device.mig.uuid ??
                `${device.gpu.index}/${device.mig.gpu_instance_id}/${device.mig.compute_instance_id}`)
              : (device.gpu.uuid ?? `${device.gpu.index}`)
          }
          className="jp-GpuEnv-heldCard"
          data-kind={device.kind}
        >
          {device.kind === 'mig' ? (
            <MigCard device={device} />
          ) : (
            <GpuCard device={device} />
          )}
        </div>
      ))}
      {props.note && <div className="jp-GpuEnv-note">{props.note}</div>}
    </div>
  );
}
