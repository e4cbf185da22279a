"""The contract rows, one module each; ``alkstore_contract.suite.row.ROW_MODULES`` lists them in order.

Part of the suite.
"""
