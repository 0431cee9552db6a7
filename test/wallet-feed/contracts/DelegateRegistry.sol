// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// The delegation writes of the delegate.xyz v2 registry, with its exact events, and nothing else.
contract DelegateRegistry {
    event DelegateAll(address indexed from, address indexed to, bytes32 rights, bool enable);
    event DelegateContract(
        address indexed from, address indexed to, address indexed contract_, bytes32 rights, bool enable
    );
    event DelegateERC721(
        address indexed from,
        address indexed to,
        address indexed contract_,
        uint256 tokenId,
        bytes32 rights,
        bool enable
    );

    mapping(bytes32 => bool) public enabled;

    function delegateAll(address to, bytes32 rights, bool enable) external payable returns (bytes32 hash) {
        hash = keccak256(abi.encode(1, msg.sender, to, rights));
        enabled[hash] = enable;
        emit DelegateAll(msg.sender, to, rights, enable);
    }

    function delegateContract(address to, address contract_, bytes32 rights, bool enable)
        external
        payable
        returns (bytes32 hash)
    {
        hash = keccak256(abi.encode(2, msg.sender, to, contract_, rights));
        enabled[hash] = enable;
        emit DelegateContract(msg.sender, to, contract_, rights, enable);
    }

    function delegateERC721(address to, address contract_, uint256 tokenId, bytes32 rights, bool enable)
        external
        payable
        returns (bytes32 hash)
    {
        hash = keccak256(abi.encode(3, msg.sender, to, contract_, tokenId, rights));
        enabled[hash] = enable;
        emit DelegateERC721(msg.sender, to, contract_, tokenId, rights, enable);
    }
}
