"""The contract rows, one module each; ``alkstore_contract.suite.ROW_MODULES`` lists them in order."""
