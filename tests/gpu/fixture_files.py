"""Names of the recorded outputs in ../shared/fixtures/gpu that the GPU tests read."""

A100_XML = "telegraf-a100-sxm4-80gb-mig4x1g20gb-535.54.03.xml"
H100_MIG = "nvgpuexp-capture-h100-mig-590.48.01.txt"
H200_MIG = "nvgpuexp-capture-h200-mig-590.48.01.txt"
H100 = "nvgpuexp-capture-h100-80gb-hbm3-590.48.01.txt"
H100X8_QUERY = "gpud-h100x8-query-text-migdisabled-535.161.08.txt"
H100X8_TABLE = "gpud-h100x8-table-migdisabled-550.90.07.txt"
L_7X1G = "cnd-h100-nvidia-smi-L-mig-7x1g10gb.txt"
L_BALANCED = "cnd-h100-nvidia-smi-L-mig-all-balanced.txt"
LGI_A100 = "cnd-a100-mig-lgi-7x1g5gb.rst-excerpt-L67-86.txt"
GFD_LABELS = "cnd-h100-gfd-node-labels-mig-mixed-all-balanced-550.54.15.json"
MIGPARTED_DEFAULT = "migparted-config-default.yaml"
MIGPARTED_EXAMPLES = "migparted-examples-config.yaml"

MIB = 1 << 20
