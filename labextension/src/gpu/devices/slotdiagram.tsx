/**
 * The MIG slot diagram of one GPU: its memory slices in a row, each GPU
 * instance a block spanning its slices and labelled with its profile, the
 * compute instances that share it inside, and this server's highlighted.
 */
import React from 'react';

import { formatUsage, percentOf } from '../../components/format';
import { IGpuDevice } from '../../api/types';
import { IInstanceBlock, migLayout, parseProfile } from './layout';

function sliceRange(block: IInstanceBlock): string {
  const last = block.start + block.size - 1;
  return block.size === 1
    ? `memory slice ${block.start}`
    : `memory slices ${block.start}–${last}`;
}

function describe(block: IInstanceBlock): string {
  const parts = [
    block.gi !== null ? `GPU instance ${block.gi}` : 'GPU instance',
    (block.profile ?? 'unknown profile') +
      (block.profileInferred ? ' (inferred)' : ''),
    sliceRange(block) + (block.placed ? '' : ' (drawn in order)')
  ];
  if (block.used !== null && block.total !== null) {
    parts.push(`${formatUsage(block.used, block.total)} used`);
  }
  if (block.computes.length > 1) {
    const cis = block.computes.map(c => c.mig.profile ?? c.label);
    parts.push(`compute instances ${cis.join(', ')}`);
  }
  if (block.visible) {
    parts.push('yours');
  }
  return parts.join(' · ');
}

function InstanceBlock(props: { block: IInstanceBlock }): JSX.Element {
  const { block } = props;
  const parts = parseProfile(block.profile);
  const shared = block.computes.length > 1;
  const fill =
    block.used !== null && block.total !== null
      ? percentOf(block.used, block.total)
      : null;
  const summary = describe(block);
  return (
    <li
      className="jp-GpuEnv-instance"
      style={{ gridColumn: `${block.start + 1} / span ${block.size}` }}
      data-testid="gpu-env-mig-instance"
      data-profile={block.profile ?? ''}
      data-gi={block.gi ?? ''}
      data-visible={block.visible}
      data-shared={shared}
      data-start={block.start}
      data-size={block.size}
      title={summary}
      aria-label={summary}
    >
      <span className="jp-GpuEnv-instanceLabel">
        <span className="jp-GpuEnv-instanceCompute">
          {parts ? `${parts.gi}g` : '?'}
        </span>
        <span className="jp-GpuEnv-instanceMemory">
          {parts ? parts.memory : (block.profile ?? '')}
        </span>
      </span>
      {shared && (
        <span className="jp-GpuEnv-computes">
          {block.computes.map((ci, i) => (
            <span
              key={ci.mig.uuid ?? i}
              className="jp-GpuEnv-compute"
              style={{ flexGrow: ci.size }}
              data-testid="gpu-env-mig-compute"
              data-profile={ci.mig.profile ?? ''}
              data-visible={ci.mig.visible}
              title={`${ci.mig.profile ?? ci.label} · CI ${ci.mig.compute_instance_id ?? '?'}${ci.mig.visible ? ' · yours' : ''}`}
            >
              {ci.label}
            </span>
          ))}
        </span>
      )}
      {fill !== null && (
        <span className="jp-GpuEnv-instanceFill" aria-hidden="true">
          <span style={{ width: `${fill.toFixed(1)}%` }} />
        </span>
      )}
    </li>
  );
}

export function MigDiagram(props: { gpu: IGpuDevice }): JSX.Element {
  const layout = migLayout(props.gpu);
  const mine = layout.blocks.some(b => b.visible);
  const notes = [`${layout.slots} memory slices`];
  if (layout.empty.length > 0) {
    notes.push('dashed: free or not visible here');
  }
  if (layout.ordered) {
    notes.push('positions not reported, drawn in order');
  }
  return (
    <div
      className="jp-GpuEnv-migDiagram"
      data-testid="gpu-env-mig-diagram"
      data-slots={layout.slots}
    >
      <ol
        className="jp-GpuEnv-slots"
        style={{ gridTemplateColumns: `repeat(${layout.slots}, 1fr)` }}
        aria-label={`MIG layout of GPU ${props.gpu.index}`}
      >
        {layout.empty.map(slot => (
          <li
            key={`empty-${slot}`}
            className="jp-GpuEnv-slotEmpty"
            style={{ gridColumn: `${slot + 1} / span 1` }}
            title={`Memory slice ${slot}: free, or used by an instance this server cannot see`}
            aria-label={`memory slice ${slot}: free or not visible`}
          />
        ))}
        {layout.blocks.map((block, i) => (
          <InstanceBlock key={`${block.gi ?? 'x'}-${i}`} block={block} />
        ))}
      </ol>
      <div className="jp-GpuEnv-legend jp-GpuEnv-note">
        {mine && (
          <span className="jp-GpuEnv-legendMine">
            <span className="jp-GpuEnv-legendSwatch" aria-hidden="true" />
            yours
          </span>
        )}
        <span>{notes.join(' · ')}</span>
      </div>
    </div>
  );
}
