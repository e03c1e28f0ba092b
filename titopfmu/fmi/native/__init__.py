"""Native FMUs: every block as an FMI 2.0 unit (co-simulation and model exchange) compiled from
the C core and one FMI wrapper written in C; no Python where the FMU runs."""
