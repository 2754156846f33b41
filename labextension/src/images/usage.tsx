/**
 * "How to use" under an image's row: the squashfuse lines a user copies into
 * a shell on a cluster (mount where they may, run its Python, unmount), with
 * Copy buttons. Open by itself under an image packed while the Lab is open
 * (`open`), so the lines are there when the pack ends, not only in the "⋯"
 * menu; closed under the others, which would fill a narrow sidebar.
 */
import { Clipboard } from '@jupyterlab/apputils';
import React, { useState } from 'react';

import { IImage } from '../api/types';

function CopyLine(props: {
  label: string;
  hint: string;
  line: string;
  usage: string;
}): JSX.Element {
  const [copied, setCopied] = useState(false);
  return (
    <div className="jp-GpuEnv-usageLine" data-usage={props.usage}>
      <div>
        <span>
          <span className="jp-GpuEnv-fieldLabel">{props.label}</span>
          <span className="jp-GpuEnv-fieldHint"> — {props.hint}</span>
        </span>
        <button
          type="button"
          className="jp-Button jp-mod-small"
          title={`Copy: ${props.line}`}
          onClick={() => {
            Clipboard.copyToSystem(props.line);
            setCopied(true);
          }}
        >
          {copied ? 'Copied' : 'Copy'}
        </button>
      </div>
      <pre className="jp-GpuEnv-code">{props.line}</pre>
    </div>
  );
}

export function ImageUsage(props: {
  image: IImage;
  open: boolean;
}): JSX.Element {
  const { image } = props;
  const { usage } = image;
  return (
    <details
      className="jp-GpuEnv-imageUsage"
      data-testid="gpu-env-image-how-to-use"
      open={props.open}
    >
      <summary>How to use</summary>
      <div className="jp-GpuEnv-usageLines">
        <CopyLine
          usage="squashfuse"
          label="Mount and run"
          hint={`on any machine with squashfuse, as yourself: it mounts at ${usage.squashfuse_mount}`}
          line={usage.squashfuse}
        />
        <CopyLine
          usage="unmount"
          label="Unmount"
          hint="when done (fusermount3 or fusermount)"
          line={usage.unmount}
        />
        <div className="jp-GpuEnv-fieldHint">
          Run its programs as <code>bin/python -m …</code> from the mount; the
          Apptainer and unsquashfs lines are in the image’s “⋯” menu (“Show how
          to use it…”).
        </div>
      </div>
    </details>
  );
}
