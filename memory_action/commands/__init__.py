"""Comment commands (``@agent remember|forget|memory|review``): ``parse`` finds them without a
model, ``run`` routes a command run (who may, where a change lands), ``replies`` words the
answers, ``sticky`` and ``proposal_section`` edit the proposal in the sticky comment."""
