// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// A minimal ERC-721 with ERC-4907 rentals: just enough collection for the wallet feed's chain test.
contract GiraffeTower {
    event Transfer(address indexed from, address indexed to, uint256 indexed tokenId);
    event Approval(address indexed owner, address indexed approved, uint256 indexed tokenId);
    event ApprovalForAll(address indexed owner, address indexed operator, bool approved);
    event UpdateUser(uint256 indexed tokenId, address indexed user, uint64 expires);

    struct Rental {
        address user;
        uint64 expires;
    }

    address public immutable minter;
    uint256 public totalSupply;
    mapping(address => uint256) public balanceOf;
    mapping(uint256 => address) public getApproved;
    mapping(address => mapping(address => bool)) public isApprovedForAll;
    mapping(uint256 => address) private owners;
    mapping(uint256 => Rental) private rentals;

    constructor() {
        minter = msg.sender;
    }

    function supportsInterface(bytes4 id) external pure returns (bool) {
        return id == 0x01ffc9a7 || id == 0x80ac58cd || id == 0xad092b5c;
    }

    function ownerOf(uint256 tokenId) public view returns (address owner) {
        owner = owners[tokenId];
        require(owner != address(0), "no such token");
    }

    function mint(address to, uint256 tokenId) external {
        require(msg.sender == minter, "not minter");
        require(to != address(0) && owners[tokenId] == address(0), "cannot mint");
        owners[tokenId] = to;
        balanceOf[to] += 1;
        totalSupply += 1;
        emit Transfer(address(0), to, tokenId);
    }

    function burn(uint256 tokenId) external {
        address owner = ownerOf(tokenId);
        require(authorized(owner, msg.sender, tokenId), "not allowed");
        clearUser(tokenId);
        delete getApproved[tokenId];
        delete owners[tokenId];
        balanceOf[owner] -= 1;
        totalSupply -= 1;
        emit Transfer(owner, address(0), tokenId);
    }

    function approve(address to, uint256 tokenId) external {
        address owner = ownerOf(tokenId);
        require(msg.sender == owner || isApprovedForAll[owner][msg.sender], "not allowed");
        getApproved[tokenId] = to;
        emit Approval(owner, to, tokenId);
    }

    function setApprovalForAll(address operator, bool approved) external {
        isApprovedForAll[msg.sender][operator] = approved;
        emit ApprovalForAll(msg.sender, operator, approved);
    }

    function transferFrom(address from, address to, uint256 tokenId) public {
        require(ownerOf(tokenId) == from, "not the owner");
        require(to != address(0), "use burn");
        require(authorized(from, msg.sender, tokenId), "not allowed");
        // ERC-4907: a transfer ends the rental, with its own UpdateUser log.
        clearUser(tokenId);
        delete getApproved[tokenId];
        owners[tokenId] = to;
        balanceOf[from] -= 1;
        balanceOf[to] += 1;
        emit Transfer(from, to, tokenId);
    }

    function setUser(uint256 tokenId, address user, uint64 expires) external {
        require(authorized(ownerOf(tokenId), msg.sender, tokenId), "not allowed");
        rentals[tokenId] = Rental(user, expires);
        emit UpdateUser(tokenId, user, expires);
    }

    function userOf(uint256 tokenId) external view returns (address) {
        Rental memory rental = rentals[tokenId];
        return uint256(rental.expires) >= block.timestamp ? rental.user : address(0);
    }

    function userExpires(uint256 tokenId) external view returns (uint256) {
        return rentals[tokenId].expires;
    }

    function authorized(address owner, address spender, uint256 tokenId) private view returns (bool) {
        return spender == owner || getApproved[tokenId] == spender || isApprovedForAll[owner][spender];
    }

    function clearUser(uint256 tokenId) private {
        if (rentals[tokenId].user != address(0)) {
            delete rentals[tokenId];
            emit UpdateUser(tokenId, address(0), 0);
        }
    }
}
