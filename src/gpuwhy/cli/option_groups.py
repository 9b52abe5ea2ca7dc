"""A group of options declared once and handed to a command as one object.

:func:`option_group` puts the group's options where one parameter of a typer
command stands (so ``--help`` lists them there) and calls the command with what
the user typed, gathered into one object. Import-light: typer and inspect only.
"""

from __future__ import annotations

import inspect
from typing import Annotated, Any, Callable, Optional, Sequence

import typer

#: One option: (parameter name, flag, metavar, help); metavar None makes an on/off flag.
OptionSpec = tuple[str, str, Optional[str], str]


def option_group(param: str, spec: Sequence[OptionSpec], gather: Callable[..., Any]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A decorator giving a typer command the options of ``spec`` in place of its
    ``param`` parameter; the command is called with ``param=gather(**typed)``, the
    text options None where not given and the flags False.

    Raises:
        ValueError: (when decorating) if the command has no ``param`` parameter.
    """

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        sig = inspect.signature(command, eval_str=True)
        names = list(sig.parameters)
        if param not in names:
            raise ValueError(f"{command.__name__} has no {param!r} parameter for its option group")
        at = names.index(param)
        options = []
        for name, flag, metavar, help_ in spec:
            if metavar is None:
                ann = Annotated[bool, typer.Option(flag, help=help_)]
                options.append(inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=False, annotation=ann))
            else:
                ann = Annotated[Optional[str], typer.Option(flag, metavar=metavar, help=help_)]
                options.append(inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None, annotation=ann))
        params = list(sig.parameters.values())

        def run(**kwargs: Any) -> Any:
            typed = {name: kwargs.pop(name) for name, *_ in spec}
            return command(**{param: gather(**typed)}, **kwargs)

        for attr in ("__module__", "__name__", "__qualname__", "__doc__"):  # not __wrapped__: typer reads run's own signature
            setattr(run, attr, getattr(command, attr))
        run.__signature__ = sig.replace(parameters=params[:at] + options + params[at + 1:])  # type: ignore[attr-defined]
        return run

    return decorate
