"""Ready-made systems (the paper's examples)."""
