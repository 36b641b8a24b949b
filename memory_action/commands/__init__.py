"""Comment commands (``@agent remember|forget|memory|review``): ``parse`` finds them without a
model, ``route`` decides what a comment run does and carries a command out (who may, where a
change lands), ``replies`` words the answers, ``proposal_comment`` and ``proposal_section`` edit
the proposal in the sticky comment."""
