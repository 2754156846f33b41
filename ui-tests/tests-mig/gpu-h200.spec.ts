/**
 * Compute instances sharing a GPU instance, from the recorded H200 capture:
 * GPU instance 2 (3g.71gb) holds 1c.3g.71gb and 2c.3g.71gb. The server
 * replays the H100 capture; this test reads the H200 one with the project's
 * own parser (jupyter_gpu_env.gpu.sources.recorded) and gives its GPUs to the page
 * in place of the H100's, this server holding the 1c.3g.71gb device.
 */
import { expect, test } from '@jupyterlab/galata';
import { execFileSync } from 'child_process';

import {
  GPU_ROUTE,
  H200_CAPTURE,
  describeRecorded,
  instanceBlocks,
  openPanel,
  screenshotSection
} from './helpers';

// `nvidia-smi -L` in the capture: "MIG 1c.3g.71gb Device 0: (UUID: MIG-00000000-...)".
const HELD = 'MIG-00000000-0000-0000-0000-000000000000';

const READ_CAPTURE = `
import json, sys
from jupyter_gpu_env.gpu.sources.recorded import RecordedSource
reading = RecordedSource(sys.argv[1]).read()
print(json.dumps({
    "gpus": [d.model_dump(mode="json") for d in reading.devices],
    "gpu_status": reading.status.model_dump(mode="json"),
}))
`;

const HISTORY_ROUTE = /\/gpu-env\/api\/gpu\/history(\?.*)?$/;

interface IGpu {
  mig_devices: { uuid: string | null; memory_used_bytes: number | null }[];
}

/** The H200's devices as the server would send them, `HELD` visible. */
function h200Reading(): { gpus: unknown[]; gpu_status: unknown } {
  // The Python of the server under test (first on PATH, as for `jupyter`).
  const out = execFileSync('python', ['-c', READ_CAPTURE, H200_CAPTURE], {
    env: { ...process.env, CUDA_VISIBLE_DEVICES: HELD },
    encoding: 'utf-8'
  });
  return JSON.parse(out);
}

describeRecorded('MIG compute instances sharing a GPU instance', () => {
  test('draws them inside their GPU instance, this one highlighted', async ({
    page
  }) => {
    const reading = h200Reading();
    await page.route(GPU_ROUTE, async route => {
      const response = await route.fetch();
      const snapshot = await response.json();
      await route.fulfill({ response, json: { ...snapshot, ...reading } });
    });
    // The history too: the held device's memory as the capture says, in
    // every sample the server kept (its own device keys are the H100's).
    const held = (reading.gpus as IGpu[])[0].mig_devices.find(
      m => m.uuid === HELD
    );
    await page.route(HISTORY_ROUTE, async route => {
      const response = await route.fetch();
      const history = await response.json();
      for (const point of history.points) {
        point.devices = {
          [HELD]: { memory_used_bytes: held?.memory_used_bytes ?? null }
        };
      }
      await route.fulfill({ response, json: history });
    });
    await openPanel(page);

    await expect(page.getByTestId('gpu-env-held-profile')).toHaveText(
      '1c.3g.71gb'
    );
    await expect(page.getByTestId('gpu-env-held-ids')).toHaveText(
      'GI 2 · CI 0 · 16 SMs'
    );
    await expect(page.getByTestId('gpu-env-held')).toContainText(
      'shared by the 2 compute instances of GPU instance 2'
    );

    const diagram = page.getByTestId('gpu-env-mig-diagram');
    // Five MIG devices, four GPU instances.
    await instanceBlocks(diagram, ['1g.18gb', '1g.18gb', '2g.35gb', '3g.71gb']);
    const shared = diagram.locator('[data-gi="2"]');
    await expect(shared).toHaveAttribute('data-shared', 'true');
    await expect(shared).toHaveAttribute('data-visible', 'true');
    await expect(shared).toHaveAttribute('data-size', '4');
    const computes = shared.getByTestId('gpu-env-mig-compute');
    await expect(computes).toHaveCount(2);
    await expect(computes.nth(0)).toHaveText('1c');
    await expect(computes.nth(0)).toHaveAttribute('data-visible', 'true');
    await expect(computes.nth(1)).toHaveText('2c');
    await expect(computes.nth(1)).toHaveAttribute('data-visible', 'false');
    // 2c is twice as wide as 1c.
    const [one, two] = await computes.evaluateAll(nodes =>
      nodes.map(n => n.getBoundingClientRect().width)
    );
    expect(two / one).toBeGreaterThan(1.6);
    // Only the 1c slice is this server's.
    await expect(
      page.getByTestId('gpu-env-mig').filter({ hasText: 'yours' })
    ).toHaveCount(1);

    await screenshotSection(page, 'gpu-mig-h200.png');
  });
});
