/**
 * Icons of the Environments and Images sections, themed through
 * JupyterLab's `jp-icon*` classes.
 */
import { LabIcon } from '@jupyterlab/ui-components';

const PACK_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24">
  <path class="jp-icon3" fill="#616161" d="M12 2 3 6.5v11L12 22l9-4.5v-11zm0 2.24 6.26 3.13L12 10.5 5.74 7.37zM5 9l6 3v7.5l-6-3zm8 10.5V12l6-3v7.5z"/>
</svg>`;

const IMAGE_FILE_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24">
  <g class="jp-icon3" fill="#616161">
    <path d="M6 2h9l5 5v13a2 2 0 0 1-2 2H6a2 2 0 0 1-2-2V4a2 2 0 0 1 2-2zm0 2v16h12V8h-4V4z"/>
    <path d="M8 11h8v2H8zm0 3.5h8v2H8z"/>
  </g>
</svg>`;

/** A box: pack an environment into an image. */
export const packIcon = new LabIcon({
  name: 'jupyter-gpu-env:pack',
  svgstr: PACK_SVG
});

/** One file standing for many: a packed image. */
export const imageFileIcon = new LabIcon({
  name: 'jupyter-gpu-env:image-file',
  svgstr: IMAGE_FILE_SVG
});
