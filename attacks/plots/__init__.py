"""Pictures of attack results, kept apart from their computation: ROC curves (``roc_plot``) and learning curves
(``learning_curve_plot``). Matplotlib's object API only, never pyplot (safe in Ray workers and threads).

Imports no other attacks room at run time; a picture's result type is imported only while type checking.
"""
