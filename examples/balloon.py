"""The 9-dof balloon of seed 004 (section 4): build, simulate, save CSV and plot.

python examples/balloon.py            # same as: titopfmu example balloon --plot results/balloon.png
"""

from titopfmu.examples.balloon import UNITS, run_balloon
from titopfmu.plotting import plot_result

if __name__ == "__main__":
    result = run_balloon(t_final=20.0, output_interval=0.01, rtol=1e-8, atol=1e-10)
    result.to_csv("results/balloon.csv")
    plot_result(result, "results/balloon.png", units=UNITS, title="seed 004, Fig. 17")
    print("wrote results/balloon.csv and results/balloon.png")
