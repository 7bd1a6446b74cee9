"""`commchar export-model`: a fitted model file as SimGrid/SMPI or LogGOPSim parameters."""

from __future__ import annotations

import argparse

from rich.console import Console

from commchar import jsonio, outfile

NAME = "export-model"
HELP = "write a fitted model as SimGrid/SMPI configuration or LogGOPSim command-line parameters"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("model", metavar="MODEL", help="model file (commchar fit -o)")
    parser.add_argument("--to", choices=("smpi", "loggopsim"), required=True,
                        help="smpi: --cfg options and a platform link; loggopsim: --LogGOPS_* arguments")
    parser.add_argument("--library", metavar="L", help="the model's library to export (needed when it has several)")
    parser.add_argument("--json", action="store_true", help="print the parameters and notes as JSON")
    parser.add_argument("-o", "--output", metavar="FILE", help="write here instead of standard output")


def render(args: argparse.Namespace) -> tuple[str, list[str]]:
    from commchar.interop.loggopsim import loggopsim_params
    from commchar.interop.p2pcost import read
    from commchar.interop.simgrid import smpi_config
    from commchar.modelfile import load

    cost = read(load(args.model), args.library)
    if args.to == "smpi":
        config = smpi_config(cost)
        if args.json:
            return jsonio.dumps({"library": cost.library, "link": {"latency_us": config.link_latency_us,
                                 "bandwidth_Bps": config.link_bandwidth_Bps},
                                 "cfg": config.options, "notes": config.notes}, indent=2) + "\n", []
        text = (f"# SimGrid/SMPI parameters of {cost.source}, from {args.model}\n"
                f"# platform link: {config.platform_link()}\n"
                + "".join(f"{arg}\n" for arg in config.cfg_arguments()))
        return text, config.notes
    params = loggopsim_params(cost)
    if args.json:
        return jsonio.dumps({"library": cost.library, "unit": "ns", "params": params.values,
                             "notes": params.notes}, indent=2) + "\n", []
    return " ".join(params.arguments()) + "\n", params.notes


def execute(args: argparse.Namespace, console: Console) -> int:
    text, notes = render(args)
    if args.output:
        outfile.write_text(args.output, text)
        console.print(f"written to {args.output}", markup=False, highlight=False)
    else:
        console.print(text, end="", markup=False, highlight=False, soft_wrap=True)
    from commchar import terminal

    errors = terminal.console(stderr=True)  # standard output stays usable as arguments
    for note in notes:
        errors.print(f"note: {note}", markup=False, highlight=False, soft_wrap=True)
    return 0
